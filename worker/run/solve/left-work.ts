/**
 * When the agent stops on a limit before a change passed the gate (the run's solve step), the
 * work in its workspace is kept for the final status: the change computed on the host from the workspace's
 * exported files (never through the agent's git or shell), tested once in a fresh sandbox unless the last
 * gate tested exactly that change. A change or test output holding a setup secret's value is withheld.
 */
import type { ExitReason, Sandbox, Trajectory } from "../../../src/shared/contracts.js";
import { AgentFixError, SandboxError } from "../../../src/shared/errors.js";
import { type LeftWork, type LeftWorkTests, testTail } from "../../../src/shared/github/left-work.js";
import { exitOf, type LimitReason } from "../../agent/exit.js";
import { createWorkerLogger, type Logger } from "../../log.js";
import { secretsIn } from "../prepare/secret-scan.js";
import { perTestVerdict } from "../tests/per-test-verdict.js";
import type { TestRun } from "../tests/test-run.js";
import { captureChange, type GateSetup, type PipelineGate, type TestedChange, testChange } from "./gate.js";

/** The endings where the agent was stopped from outside its work: what it did so far is worth showing. */
const LIMIT_EXITS: ReadonlySet<ExitReason> = new Set<LimitReason>([
  "exit_step_limit",
  "exit_cost",
  "exit_time",
  "exit_context",
  "exit_api",
  "exit_format",
  "exit_replay_exhausted",
]);

interface LeftWorkInput {
  trajectory: Trajectory;
  gate: Pick<PipelineGate<unknown>, "lastRun" | "lastTested">;
  setup: GateSetup;
  /** The agent's sandbox, still running. */
  workspace: Sandbox;
  secrets: Record<string, string>;
  signal: AbortSignal;
  /** Called before the tests run on the change (they take a while). */
  onTesting?: () => void;
  logger?: Logger | undefined;
}

/** Why the loop ended (`exit_step_limit` also when the run kept its diff as the submission). */
export function endingOf(trajectory: Trajectory): ExitReason | "unknown" {
  return exitOf(trajectory.info.exit_status)?.reason ?? "unknown";
}

/** The unfinished work, or null when the run did not end on a limit or left no change. */
export async function captureLeftWork(input: LeftWorkInput): Promise<LeftWork | null> {
  const exitStatus = endingOf(input.trajectory);
  if (exitStatus === "unknown" || !LIMIT_EXITS.has(exitStatus)) return null;
  let change: TestedChange;
  try {
    change = await captureChange(input.setup, input.workspace);
  } catch (error) {
    if (!(error instanceof SandboxError) || input.signal.aborted) throw error;
    (input.logger ?? createWorkerLogger()).warn(
      `the unfinished change could not be read from the workspace: ${error.message}`,
    );
    return null;
  }
  if (change.patch === "") return null;
  const secretNames = secretsIn(change.patch, input.secrets);
  const tests = await testsOn(change, input);
  if (tests.kind === "ran" && tests.tail !== null && secretsIn(tests.tail, input.secrets).length > 0) {
    tests.tail = null;
  }
  return {
    exitStatus,
    testCommand: input.setup.test.command,
    diff: secretNames.length > 0 ? { kind: "withheld", secretNames } : { kind: "shown", patch: change.patch },
    tests,
  };
}

/** The last gate's result when it tested exactly this change; otherwise one run in a fresh sandbox. */
async function testsOn(change: TestedChange, input: LeftWorkInput): Promise<LeftWorkTests> {
  const last = input.gate.lastRun();
  let run: TestRun;
  if (last && last.change.tree === change.tree && last.change.patch === change.patch) {
    run = last.run;
  } else {
    input.onTesting?.();
    try {
      run = await testChange(input.setup, change, { signal: input.signal });
    } catch (error) {
      if (input.signal.aborted || !(error instanceof AgentFixError)) throw error;
      return { kind: "not_run", why: error.message };
    }
  }
  // Test by test against the baseline where both have results, as the gate would have judged it.
  const baseline = input.setup.baseline ? await input.setup.baseline.catch(() => null) : null;
  const verdict = baseline ? perTestVerdict(baseline, run) : null;
  return {
    kind: "ran",
    passed: verdict ? verdict.passed : run.passed,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    ...(run.timedOut && run.limit ? { timeoutMs: run.limit.timeoutMs } : {}),
    tail: testTail(run.output),
  };
}
