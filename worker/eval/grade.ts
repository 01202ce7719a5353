/**
 * Grading as SWE-bench's harness does it: in a fresh sandbox, the agent's change is applied, the test
 * files the test patch touches are reset to the base commit, the test patch is applied, and the
 * FAIL_TO_PASS and PASS_TO_PASS tests run. Resolved: every one of both lists passes.
 */
import type { Sandbox } from "../../src/contracts.js";
import { patchPaths } from "../pipeline/gate.js";
import type { PreparedTree } from "../pipeline/prepare.js";
import type { RunSandboxes } from "../pipeline/sandbox.js";
import type { EvalInstance } from "./instances.js";

const TEST_TIMEOUT_MS = 30 * 60_000;
const MODEL_PATCH = ".git/agent-fix-eval-model.patch";
const TEST_PATCH = ".git/agent-fix-eval-test.patch";

interface TestListResult {
  passed: string[];
  failed: string[];
}

export type Grade =
  | { resolved: boolean; FAIL_TO_PASS: TestListResult; PASS_TO_PASS: TestListResult }
  | {
      resolved: false;
      error: "empty_patch" | "patch_does_not_apply" | "test_patch_does_not_apply";
      detail: string;
    };

/** A word for the shell: as it is when plain, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w./:=@+-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** `template` with `{tests}` replaced by the ids, each quoted for the shell. */
export function testCommandFor(template: string, ids: readonly string[]): string {
  const words = ids.map(shellWord).join(" ");
  // A function, not the string: in a replacement string `$'` (a quoted id ending in `$`, as a Go
  // pattern `^TestX$` does) and `$&` are patterns of replaceAll's own.
  return template.replaceAll("{tests}", () => words).trim();
}

export async function gradeInstance(
  setup: { sandboxes: RunSandboxes; prepared: PreparedTree },
  instance: EvalInstance & { test_command: string },
  patch: string,
  signal?: AbortSignal,
): Promise<Grade> {
  if (patch.trim() === "")
    return { resolved: false, error: "empty_patch", detail: "the agent changed nothing" };
  return setup.sandboxes.using(setup.prepared.dir, async (sandbox) => {
    const exec = (command: string, timeoutMs = 120_000) =>
      sandbox.exec(command, { cwd: sandbox.workdir, timeoutMs, ...(signal ? { signal } : {}) });
    await sandbox.writeFile(MODEL_PATCH, patch);
    const applied = await exec(`git apply --binary --whitespace=nowarn ${MODEL_PATCH}`);
    if (applied.exitCode !== 0) {
      return { resolved: false, error: "patch_does_not_apply", detail: applied.output.trim() };
    }
    // The agent may have edited the tests the test patch replaces: they go back to the base first.
    const base = setup.prepared.base.commit;
    for (const path of patchPaths(instance.test_patch)) {
      const quoted = `'${path.replaceAll("'", `'\\''`)}'`;
      await exec(`git checkout ${base} -- ${quoted} 2>/dev/null || rm -f ${quoted}`);
    }
    await sandbox.writeFile(TEST_PATCH, instance.test_patch);
    const tests = await exec(`git apply --binary --whitespace=nowarn ${TEST_PATCH}`);
    if (tests.exitCode !== 0) {
      return { resolved: false, error: "test_patch_does_not_apply", detail: tests.output.trim() };
    }
    const run = (ids: readonly string[]) => runTestList(sandbox, instance.test_command, ids, signal);
    const failToPass = await run(instance.FAIL_TO_PASS);
    const passToPass = await run(instance.PASS_TO_PASS);
    const resolved = failToPass.failed.length === 0 && passToPass.failed.length === 0;
    return { resolved, FAIL_TO_PASS: failToPass, PASS_TO_PASS: passToPass };
  });
}

/**
 * The list in one run; only when that fails, each test alone, to name the ones that fail (a test that
 * passes alone but not with the others counts as failed, as the whole run did not pass).
 */
async function runTestList(
  sandbox: Sandbox,
  template: string,
  ids: readonly string[],
  signal: AbortSignal | undefined,
): Promise<TestListResult> {
  if (ids.length === 0) return { passed: [], failed: [] };
  const passes = async (list: readonly string[]) => {
    const result = await sandbox.exec(testCommandFor(template, list), {
      cwd: sandbox.workdir,
      timeoutMs: TEST_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    return result.exitCode === 0 && !result.timedOut;
  };
  if (await passes(ids)) return { passed: [...ids], failed: [] };
  if (ids.length === 1) return { passed: [], failed: [...ids] };
  const result: TestListResult = { passed: [], failed: [] };
  for (const id of ids) ((await passes([id])) ? result.passed : result.failed).push(id);
  if (result.failed.length === 0) return { passed: [], failed: [...ids] };
  return result;
}
