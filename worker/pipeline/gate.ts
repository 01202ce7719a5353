import { DEFAULT_TEST_PATHS } from "../../src/config/repo.js";
import type { Gate, Sandbox } from "../../src/contracts.js";
import { runTests, type TestCommand, type TestRun } from "./baseline.js";
import { pathMatcher } from "./forbidden-paths.js";

/**
 * Step 6's gate: the test command in the sandbox on the submitted change. The workspace already holds
 * the change `submit` diffed, so the tests run there as they are; every attempt is reported to `onRun`.
 */
export function createGate(sandbox: Sandbox, test: TestCommand, onRun?: (run: TestRun) => void): Gate {
  return async (_patch, signal) => {
    const run = await runTests(sandbox, test, signal);
    onRun?.(run);
    const verdict = run.passed
      ? "The tests pass."
      : run.timedOut
        ? `The test command \`${test.command}\` timed out after ${Math.round(test.timeoutMs / 1000)} s.`
        : `The test command \`${test.command}\` failed (exit ${run.exitCode}).`;
    return { passed: run.passed, output: `${verdict}\n${run.output}` };
  };
}

/** The paths a unified diff touches (both sides of a rename), without a/ and b/ prefixes. */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const line of patch.split("\n")) {
    const match =
      /^(?:---|\+\+\+) (?:"?[ab]\/)(.*?)"?\t?$/.exec(line) ?? /^rename (?:from|to) (.*)$/.exec(line);
    if (match?.[1]) paths.add(match[1]);
  }
  return [...paths];
}

export interface TestProof {
  /** Test files the change adds or modifies. */
  testFiles: string[];
  /** The tests with only the test files applied (null when no test file changed). */
  before: TestRun | null;
}

/**
 * After the gate passed: when the change touches test files, runs the tests on the unchanged code with
 * only those files applied, the proof reviewers want that the new tests fail without the fix. Leaves
 * the workspace without the non-test part of the change (the run is over; publishing uses the patch).
 */
export async function proveTests(
  sandbox: Sandbox,
  test: TestCommand,
  patch: string,
  patterns: readonly string[] = DEFAULT_TEST_PATHS,
  signal?: AbortSignal,
): Promise<TestProof> {
  const isTestFile = pathMatcher(patterns);
  const changed = patchPaths(patch);
  const testFiles = changed.filter(isTestFile);
  const codeFiles = changed.filter((path) => !testFiles.includes(path));
  if (testFiles.length === 0) return { testFiles, before: null };
  if (codeFiles.length > 0) {
    const quoted = codeFiles.map((path) => `'${path.replaceAll("'", "'\\''")}'`).join(" ");
    const revert = await sandbox.exec(
      `git add -A && git diff --cached --binary HEAD -- ${quoted} | git apply -R --index`,
      { cwd: sandbox.workdir, timeoutMs: 60_000, ...(signal ? { signal } : {}) },
    );
    if (revert.exitCode !== 0) return { testFiles, before: null };
  }
  return { testFiles, before: await runTests(sandbox, test, signal) };
}
