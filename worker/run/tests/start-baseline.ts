/**
 * The baseline step: the repository's tests on the prepared tree, before any change, in a sandbox of its
 * own that starts once the agent's is up (baseline-alongside.ts). Failing tests stop the run unless the
 * repository allows it, or unless the runner reports each test: then the run goes on, compared test by
 * test (per-test-verdict.ts), and the status says so.
 */
import type { LoadedRepoConfig } from "../configure/repo-config.js";
import type { OpenRun } from "../open/open-run.js";
import type { Task } from "../open/task.js";
import { reuseNote } from "../prepare/prepare.js";
import type { PreparedTree } from "../prepare/prepare-tree.js";
import type { RunSandboxes } from "../prepare/run-sandboxes.js";
import { SUBMISSION_SANDBOXES } from "../solve/gate.js";
import { type Baseline, startBaselineAlongside } from "./baseline-alongside.js";
import { baselineTestsUsable } from "./per-test-verdict.js";
import { classifyTestFailure } from "./test-failure-class.js";
import type { TestRun } from "./test-run.js";
import { baselineGoesOnText, baselineStopText } from "./test-verdicts.js";

export function startBaseline(
  run: OpenRun,
  task: Task,
  config: LoadedRepoConfig,
  sandboxes: RunSandboxes,
  prepared: PreparedTree,
): Baseline {
  const branch = task.existingBranch ?? task.issue.repository.defaultBranch;
  return startBaselineAlongside({
    sandboxes,
    dir: prepared.dir,
    test: { command: config.testCommand, timeoutMs: config.testTimeoutMs },
    signal: run.signal,
    // The first gate's sandbox and its proof's, ready when the agent submits.
    spares: SUBMISSION_SANDBOXES,
    stopsRun: (baseline) => {
      // A rebase round's tree holds git's conflict markers until the agent resolves them: failing tests
      // before are expected there, and the gate still wants the tests to pass on the resolved merge.
      if (task.mergeFrom) return null;
      const reason = stopReason(config, branch, baseline);
      if (reason === null) noteGoingOn(run, config, prepared, branch, baseline);
      return reason;
    },
  });
}

/** Failing tests end the run unless the repository allows it or the runner reports each test. */
function stopReason(config: LoadedRepoConfig, branch: string, baseline: TestRun): string | null {
  if (baseline.passed || config.openPrWhenBaselineFails) return null;
  if (baselineTestsUsable(baseline)) return null;
  return baselineStopText({
    branch,
    testCommand: config.testCommand,
    run: baseline,
    failure: classifyTestFailure(baseline),
    configuredMs: config.testTimeoutMs,
    ceilingMs: config.testTimeoutCeilingMs ?? config.testTimeoutMs,
  });
}

/**
 * The status's note when the baseline failed and the run goes on compared test by test (its tests all
 * passed and the command failed after them, or some failed before any change): kept with the config's
 * notes in every later update.
 */
function noteGoingOn(
  run: OpenRun,
  config: LoadedRepoConfig,
  prepared: PreparedTree,
  branch: string,
  baseline: TestRun,
): void {
  const tests = baseline.passed ? null : baselineTestsUsable(baseline);
  if (!tests) return;
  const notes = prepared.reused
    ? reuseNote(config.configNote, prepared.reused.preparedAt)
    : config.configNote;
  const line = baselineGoesOnText(branch, config.testCommand, baseline, tests);
  run.status.configured(notes ? `${notes}\n\n${line}` : line);
}
