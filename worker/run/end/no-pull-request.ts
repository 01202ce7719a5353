/**
 * The end of a run that opens no pull request: the agent stopped without a change the tests pass on (its
 * trajectory summarised, and the work it left on a limit), or the baseline stopped the run (the tests'
 * failure before any change, and what the agent had spent).
 */

import type { RunOutcome, RunTimings } from "../../run-end.js";
import type { LoadedRepoConfig } from "../configure/repo-config.js";
import type { OpenRun } from "../open/open-run.js";
import type { Issue } from "../open/task.js";
import type { Solved } from "../solve/solve.js";
import type { Baseline } from "../tests/baseline-alongside.js";
import { baselineReport } from "../tests/baseline-report.js";
import { classifyTestFailure } from "../tests/test-failure-class.js";

export async function noPullRequest(
  run: OpenRun,
  issue: Issue,
  config: LoadedRepoConfig,
  solved: Exclude<Solved, { kind: "submitted" }>,
  baseline: Baseline,
  timings: RunTimings,
): Promise<RunOutcome> {
  if (solved.kind === "baseline_stopped") {
    const { stop, trajectory } = solved;
    const report = baselineReport({
      testCommand: config.testCommand,
      run: stop.run,
      timeoutMs: config.testTimeoutMs,
      failure: classifyTestFailure(stop.run),
      secrets: issue.setupSecrets,
      trajectory,
    });
    await run.status.failed(stop.reason, { baseline: report });
    return { kind: "no_pull_request", reason: stop.reason, trajectory, timings };
  }
  const { reason, trajectory, work } = solved;
  const testsBefore = await baseline.settled.then((tests) => tests.passed);
  await run.status.failed(reason, { trajectory, testsBefore, work: work ?? undefined });
  return { kind: "no_pull_request", reason, trajectory, timings };
}
