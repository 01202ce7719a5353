/**
 * FAIL_TO_PASS and PASS_TO_PASS of a mined pull request, found as SWE-bench found them: its test files
 * run in the Docker sandbox on the base commit with the test patch applied, then again with the fix as
 * well. Failing before and passing after: FAIL_TO_PASS; passing on both: PASS_TO_PASS. The eval's own
 * steps are reused: the host checkout at the base commit, setup into a prepared tree, fresh sandboxes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox, SandboxProvider } from "../../../src/shared/contracts.js";
import { RunSandboxes } from "../../run/prepare/run-sandboxes.js";
import type { TestOutcome } from "../../test-results/test-outcome.js";
import { checkoutInstance, prepareInstanceTree } from "../checkout.js";
import type { TestRunner } from "../runners.js";
import { chooseRunner, repoFilesIn } from "../test-runner.js";

const TEST_TIMEOUT_MS = 30 * 60_000;
const PATCH_FILE = ".git/agent-fix-mine.patch";

interface Candidate {
  /** A local git repository holding the base commit. */
  repo: string;
  baseCommit: string;
  testPatch: string;
  patch: string;
  /** The test files that exist once the test patch is applied. */
  testFiles: string[];
  /** Setup commands instead of the detected ones. */
  setup?: string[] | undefined;
}

type Validation =
  | { kind: "valid"; FAIL_TO_PASS: string[]; PASS_TO_PASS: string[]; setup: string[]; testCommand: string }
  | { kind: "skip"; reason: "no_test_runner" | "patch_does_not_apply" | "no_failing_test"; detail: string };

export async function validateCandidate(
  candidate: Candidate,
  deps: {
    provider: SandboxProvider;
    jobId: string;
    signal: AbortSignal;
    imageFor?: ((checkoutDir: string) => Promise<string | undefined>) | undefined;
  },
): Promise<Validation> {
  const root = await mkdtemp(join(tmpdir(), "agent-fix-mine-"));
  const sandboxes = new RunSandboxes(deps.provider, { jobId: deps.jobId });
  try {
    const checkout = await checkoutInstance(
      candidate.repo,
      candidate.baseCommit,
      join(root, "repo"),
      deps.signal,
    );
    const image = await deps.imageFor?.(checkout.dir);
    if (image !== undefined) sandboxes.useImage(image);
    const found = chooseRunner(await repoFilesIn(checkout.dir));
    if (!found) return { kind: "skip", reason: "no_test_runner", detail: "no runner with known test ids" };
    const setup = candidate.setup ?? found.setup;
    const prepared = await prepareInstanceTree(sandboxes, checkout, root, setup, deps.signal);
    const run = (patches: string[]) =>
      sandboxes.using(prepared.dir, (sandbox) =>
        testsAfter(sandbox, patches, found.runner, candidate.testFiles, deps.signal),
      );
    const before = await run([candidate.testPatch]);
    if ("error" in before) return { kind: "skip", reason: "patch_does_not_apply", detail: before.error };
    const after = await run([candidate.testPatch, candidate.patch]);
    if ("error" in after) return { kind: "skip", reason: "patch_does_not_apply", detail: after.error };
    const passedAfter = [...after]
      .filter(([, outcome]) => outcome === "passed")
      .map(([id]) => id)
      .sort();
    const failToPass = passedAfter.filter((id) => before.get(id) !== "passed");
    const passToPass = passedAfter.filter((id) => before.get(id) === "passed");
    if (failToPass.length === 0) {
      return {
        kind: "skip",
        reason: "no_failing_test",
        detail: "no test fails before the fix and passes after it",
      };
    }
    return {
      kind: "valid",
      FAIL_TO_PASS: failToPass,
      PASS_TO_PASS: passToPass,
      setup,
      testCommand: found.runner.template,
    };
  } finally {
    await sandboxes.disposeAll();
    await rm(root, { recursive: true, force: true });
  }
}

/** The patches applied in a fresh sandbox, then the test files run; each test's outcome. */
async function testsAfter(
  sandbox: Sandbox,
  patches: readonly string[],
  runner: TestRunner,
  testFiles: readonly string[],
  signal: AbortSignal,
): Promise<Map<string, TestOutcome> | { error: string }> {
  const exec = (command: string, timeoutMs: number) =>
    sandbox.exec(command, { cwd: sandbox.workdir, timeoutMs, signal });
  for (const patch of patches) {
    await sandbox.writeFile(PATCH_FILE, patch);
    const applied = await exec(`git apply --binary --whitespace=nowarn ${PATCH_FILE}`, 120_000);
    if (applied.exitCode !== 0) return { error: applied.output.trim() };
  }
  const report = await exec(runner.reportCommand(testFiles), TEST_TIMEOUT_MS);
  return runner.parse(report.output);
}
