/**
 * What the final status shows of a baseline that stopped the run (the run's baseline step): the
 * failure as classified, the last lines of its output (withheld when they hold a setup secret's value, as
 * the unfinished work's are), and what the agent had spent by then, read from its trajectory, so no model
 * call of the run goes unreported.
 */
import type { Trajectory } from "../../../src/shared/contracts.js";
import type {
  BaselineFailure,
  ModelSpend,
  TestFailureClass,
} from "../../../src/shared/github/baseline-failure.js";
import { testTail } from "../../../src/shared/github/left-work.js";
import { MODEL_CALL_CANCELLED } from "../../agent/exit.js";
import { secretsIn } from "../prepare/secret-scan.js";
import type { TestRun } from "./test-run.js";

/** The agent's spend as its trajectory counted it. */
function modelSpend(trajectory: Trajectory): ModelSpend {
  const stats = trajectory.info.model_stats;
  return {
    calls: stats.api_calls,
    tokensSent: stats.tokens_sent,
    tokensReceived: stats.tokens_received,
    costUsd: stats.instance_cost,
    cancelledCall: trajectory.info[MODEL_CALL_CANCELLED] === true,
  };
}

interface ReportInput {
  testCommand: string;
  run: TestRun;
  /** The limit the baseline ran under. */
  timeoutMs: number;
  failure: TestFailureClass;
  secrets: Record<string, string>;
  /** The agent's trajectory when it had started; its spend is reported. */
  trajectory: Trajectory | null;
}

/** The failing baseline as the status shows it. */
export function baselineReport(input: ReportInput): BaselineFailure {
  const { run, failure } = input;
  const tail = testTail(run.output);
  // The line the class rests on may be shown beside the tail: it is checked with it.
  const shown = failure.kind === "environment" ? `${tail}\n${failure.evidence}` : tail;
  return {
    testCommand: input.testCommand,
    exitCode: run.exitCode,
    durationMs: run.durationMs,
    timeoutMs: input.timeoutMs,
    failure,
    tail: secretsIn(shown, input.secrets).length > 0 ? null : tail,
    spent: input.trajectory ? modelSpend(input.trajectory) : null,
  };
}
