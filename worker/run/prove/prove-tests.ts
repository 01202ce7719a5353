import { DEFAULT_TEST_PATHS } from "../../config/repo.js";
import type { RunTimings } from "../../run-end.js";
import { changedPaths } from "../prepare/workspace-tree.js";
import { pathMatcher } from "../push/forbidden-paths.js";
import { type GateSetup, type TestedChange, testChange } from "../solve/gate.js";
import type { TestRun } from "../tests/test-run.js";

export interface TestProof {
  /** Test files the change adds or modifies. */
  testFiles: string[];
  /** The tests with only the test files applied (null when no test file changed). */
  before: TestRun | null;
}

/**
 * After the gate passed: when the change touches test files, runs the tests in a fresh sandbox with only
 * those files applied to the unchanged code, the proof reviewers want that the new tests fail without the
 * fix.
 */
export async function proveTests(
  setup: GateSetup,
  change: TestedChange,
  patterns: readonly string[] = DEFAULT_TEST_PATHS,
  signal?: AbortSignal,
): Promise<TestProof> {
  // The names from the trees, not the patch: its headers quote a name such as `tests/test_ "odd".py`,
  // and a quoted name matched no file, so the proof ran the unchanged code and "did not fail".
  const { base } = setup.prepared;
  const testFiles = (await changedPaths(base, base.tree, change.tree)).filter(pathMatcher(patterns));
  if (testFiles.length === 0) return { testFiles, before: null };
  return { testFiles, before: await testChange(setup, change, { signal, paths: testFiles }) };
}

/**
 * The proof as a step of the run, and where its time went: its test run, and the sandbox around it.
 * `started`: the proof of this very change begun beside its gate (solve's `proveAlongside`), waited
 * for here; only the time left of it counts, its tests first.
 */
export async function prove(
  setup: GateSetup,
  change: TestedChange,
  patterns: readonly string[] | undefined,
  signal: AbortSignal,
  started?: Promise<TestProof> | null,
): Promise<{ proof: TestProof; timings: RunTimings }> {
  const waitFrom = Date.now();
  const proof = await (started ?? proveTests(setup, change, patterns, signal));
  const waited = Date.now() - waitFrom;
  const tests = Math.min(proof.before?.durationMs ?? 0, waited);
  return { proof, timings: { sandbox: waited - tests, tests } };
}
