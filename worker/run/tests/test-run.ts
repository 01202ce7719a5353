import type { Sandbox } from "../../../src/shared/contracts.js";
import type { TestResults } from "../../test-results/test-outcome.js";
import { collectTestResults, prepareTestReports } from "./test-reports.js";
import type { TestTimeLimit } from "./test-time-limit.js";

export interface TestRun {
  passed: boolean;
  exitCode: number;
  timedOut: boolean;
  output: string;
  durationMs: number;
  /**
   * Each test's outcome, where the runner reported them (test-reports.ts); absent when none did, and the
   * exit code alone tells the run's outcome.
   */
  results?: TestResults;
  /** How its time limit was chosen (a gate's or proof's run, from the baseline); absent: `timeoutMs` as configured. */
  limit?: TestTimeLimit;
}

export interface TestCommand {
  command: string;
  timeoutMs: number;
  /** The limit's reasons when it was derived from the baseline (`timeoutMs` is its value). */
  limit?: TestTimeLimit;
}

/**
 * Runs the repository's test command in the sandbox's workspace; a failure is a result. The command runs
 * as written, with the environment that makes its runners report each test (test-reports.ts). `first`
 * (the gate's change applied) is done before the command, while the reports are prepared: each goes
 * through the shell the other is not using, so neither waits for the other's round trips. `reports`:
 * their preparation already begun (prepareTestReports), as a gate does while its change is captured.
 */
export async function runTests(
  sandbox: Sandbox,
  test: TestCommand,
  signal?: AbortSignal,
  first?: () => Promise<void>,
  reports?: Promise<Record<string, string>>,
): Promise<TestRun> {
  const [env] = await Promise.all([reports ?? prepareTestReports(sandbox, signal), first?.()]);
  const run = await sandbox.exec(test.command, {
    cwd: sandbox.workdir,
    timeoutMs: test.timeoutMs,
    env,
    ...(signal ? { signal } : {}),
  });
  const results = await collectTestResults(sandbox, run.output, signal);
  return {
    passed: run.exitCode === 0 && !run.timedOut,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    output: run.output,
    durationMs: run.durationMs,
    ...(results ? { results } : {}),
    ...(test.limit ? { limit: test.limit } : {}),
  };
}

/**
 * The run's baseline step: the tests once on the unchanged code, so the outcome can be told apart
 * from what was there.
 */
export function runBaseline(sandbox: Sandbox, test: TestCommand, signal?: AbortSignal): Promise<TestRun> {
  return runTests(sandbox, test, signal);
}
