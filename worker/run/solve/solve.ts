/**
 * The agent works in its sandbox; each submission is gated by the tests on the change as the host computed
 * it from the workspace's files, in a fresh sandbox. Returns the change the last gate tested (the one to
 * prove and publish), or why there is none, and where the time went.
 */
import type { Sandbox, Trajectory } from "../../../src/shared/contracts.js";
import { BaselineStop as AnyBaselineStop } from "../../../src/shared/errors.js";
import type { LeftWork } from "../../../src/shared/github/left-work.js";
import { exitOf } from "../../agent/exit.js";
import type { Logger } from "../../log.js";
import type { RunTimings } from "../../run-end.js";
import { progressIsBestEffort } from "../open/status-comment.js";
import type { TestProof } from "../prove/prove-tests.js";
import type { Baseline } from "../tests/baseline-alongside.js";
import type { TestRun } from "../tests/test-run.js";
import { timeoutWords } from "../tests/test-verdicts.js";
import { type AgentRunner, gatePassed } from "./agent-run-input.js";
import { type AlongsideGate, createGate, type GateSetup, type TestedChange } from "./gate.js";
import { captureLeftWork, endingOf } from "./left-work.js";
import { throttled } from "./throttled.js";

type Phase = "agent" | "testing";
type BaselineStop = AnyBaselineStop<TestRun>;

interface SolveInput {
  /** The agent, being made (its model client) while the sandboxes start; its error is the step's. */
  agent: Promise<AgentRunner>;
  /** The agent's sandbox, started from the prepared tree; released once the agent is done with it. */
  sandbox: Sandbox;
  gateSetup: GateSetup;
  maxSteps: number;
  issue: { number: number; title: string; body: string | null };
  repoName: string;
  /** The run's signal; the baseline's when it runs alongside (it stops the agent when it stops the run). */
  signal: AbortSignal;
  /** The baseline running alongside: each gate verdict and the end of the step wait for it. */
  baseline?: Baseline | undefined;
  /** Setup's secrets: unfinished work holding one of their values is not shown. */
  secrets: Record<string, string>;
  status: { progress(phase: Phase, info?: { step?: number; maxSteps?: number }): Promise<void> };
  logger?: Logger | undefined;
  /** The proof, started beside each gate on its change (prove waits for the passing one's). */
  proveAlongside?: AlongsideGate<TestProof> | undefined;
}

export type Solved = { timings: RunTimings } & (
  | {
      kind: "submitted";
      trajectory: Trajectory;
      tested: TestedChange;
      /** The proof of `tested` begun beside its gate (null without `proveAlongside`). */
      proof: Promise<TestProof> | null;
    }
  /** The agent stopped without a change the tests pass on; `work` is what it left on a limit. */
  | { kind: "no_pull_request"; reason: string; trajectory: Trajectory; work: LeftWork | null }
  /** The baseline stopped the run (the tests fail before any change); the trajectory when the agent ended. */
  | { kind: "baseline_stopped"; stop: BaselineStop; trajectory: Trajectory | null }
);

export async function solve(input: SolveInput): Promise<Solved> {
  const started = Date.now();
  const { sandbox, gateSetup, baseline } = input;
  const signal = baseline?.signal ?? input.signal;
  input.agent.catch(() => {}); // awaited below, once the gate is ready
  void input.status.progress("agent", { step: 0, maxSteps: input.maxSteps }).catch(progressIsBestEffort);
  const stepStatus = throttled(
    (update: { phase: Phase; info: { step?: number; maxSteps?: number } }) =>
      input.status.progress(update.phase, update.info),
    2_000,
  );
  let gateTestMs = 0;
  // The gate's tests run while the baseline may still run; its verdict waits for the baseline.
  const setup = baseline ? { ...gateSetup, baseline: baseline.settled } : gateSetup;
  const gate = createGate(
    setup,
    sandbox,
    (run) => {
      gateTestMs += run.durationMs;
      stepStatus.push({ phase: "testing", info: {} });
    },
    input.proveAlongside,
  );
  // The first gate's sandbox starts while the agent works (the baseline's start does it when there is one).
  if (!baseline) gateSetup.sandboxes.prewarm(gateSetup.prepared.dir);
  let trajectory: Trajectory;
  try {
    const agent = await input.agent;
    trajectory = await agent({
      sandbox,
      issue: { ...input.issue, body: input.issue.body ?? "" },
      repoName: input.repoName,
      gate: gate.gate,
      onStep: ({ step }) => stepStatus.push({ phase: "agent", info: { step, maxSteps: input.maxSteps } }),
      signal,
      baseCommit: gateSetup.prepared.base.commit,
    });
  } catch (error) {
    gate.stopAlongside();
    // A baseline that stops the run is the first reason: an agent that failed on its own meanwhile (no
    // model key, say) waits for the baseline's verdict.
    const stop = input.signal.aborted ? null : await baselineStopOf(error, baseline);
    if (!stop) throw error;
    return { kind: "baseline_stopped", stop, trajectory: null, timings: {} };
  } finally {
    stepStatus.stop();
  }
  // A run the baseline stops ends with the baseline's reason, whatever the agent did meanwhile.
  const stop = await baselineStopAfterAgent(signal, baseline?.settled).catch((error: unknown) => {
    gate.stopAlongside();
    throw error;
  });
  if (stop) {
    gate.stopAlongside();
    return { kind: "baseline_stopped", stop, trajectory, timings: {} };
  }
  input.signal.throwIfAborted();
  const agentDone = Date.now();
  const timings = solveTimings(agentDone - started, trajectory, gateTestMs, await baselineRun(baseline));
  const tested = gate.lastTested();
  if (gatePassed(trajectory) && tested && tested.patch === trajectory.info.submission) {
    gateSetup.sandboxes.release(sandbox);
    return { kind: "submitted", trajectory, tested, proof: gate.alongsideOf(tested), timings };
  }
  gate.stopAlongside();
  const reason = explainNoPullRequest(trajectory, setup.test.command, gate.lastRun()?.run);
  // Read before the agent's sandbox goes: a run stopped by a limit keeps its work visible.
  const work = await captureLeftWork({
    trajectory,
    gate,
    setup,
    workspace: sandbox,
    secrets: input.secrets,
    signal,
    onTesting: () => void input.status.progress("testing").catch(progressIsBestEffort),
    logger: input.logger,
  });
  gateSetup.sandboxes.release(sandbox);
  timings.sandbox = (timings.sandbox ?? 0) + (Date.now() - agentDone);
  return { kind: "no_pull_request", reason, trajectory, work, timings };
}

/**
 * Where the step's time went. The gates ran inside the agent's time: their test runs go to the tests'
 * account, the rest (fresh sandboxes, exporting the workspace, computing the change) to the sandboxes'.
 * So does the baseline's test run, when it ran alongside.
 */
function solveTimings(
  wallMs: number,
  trajectory: Trajectory,
  gateTestMs: number,
  baseline: TestRun | null,
): RunTimings {
  const gateMs = trajectory.info.gate.reduce((sum, record) => sum + record.durationMs, 0);
  const baselineMs = baseline?.durationMs ?? 0;
  return {
    agent: wallMs - gateMs - baselineMs,
    tests: gateTestMs + baselineMs,
    sandbox: gateMs - gateTestMs,
  };
}

/** The baseline's run when it ran alongside and let the run go on (null without one). */
async function baselineRun(baseline: Baseline | undefined): Promise<TestRun | null> {
  return baseline ? await baseline.settled : null;
}

/** The BaselineStop behind an agent's error: its own, or the baseline's once it settles. */
async function baselineStopOf(error: unknown, baseline: Baseline | undefined): Promise<BaselineStop | null> {
  if (error instanceof AnyBaselineStop) return error as BaselineStop;
  if (!baseline) return null;
  return baseline.settled.then(
    () => null,
    (failure: unknown) => (failure instanceof AnyBaselineStop ? (failure as BaselineStop) : null),
  );
}

/**
 * Whether the baseline stopped the run, once the agent's loop has returned: it aborted the agent's
 * signal, or it fails now. null when it did not (a cancel of the run is for the caller to throw).
 */
async function baselineStopAfterAgent(
  signal: AbortSignal,
  baseline: Promise<unknown> | undefined,
): Promise<BaselineStop | null> {
  if (signal.aborted)
    return signal.reason instanceof AnyBaselineStop ? (signal.reason as BaselineStop) : null;
  try {
    await baseline;
    return null;
  } catch (error) {
    if (error instanceof AnyBaselineStop) return error as BaselineStop;
    throw error;
  }
}

/** Why a run opened no pull request, in words a maintainer can act on. */
export function explainNoPullRequest(
  trajectory: Trajectory,
  testCommand: string,
  lastRun?: TestRun | undefined,
): string {
  const status = endingOf(trajectory);
  const gates = trajectory.info.gate;
  const steps = trajectory.trajectory.length;
  if (gates.length > 0 && !gates.at(-1)?.passed) {
    // A timeout is said as one: "failed" would send a maintainer looking for an assertion.
    const timedOut =
      lastRun?.timedOut && lastRun.limit ? `; its last run ${timeoutWords(lastRun.limit)}` : "";
    return `The agent submitted a change ${gates.length} time(s) but \`${testCommand}\` still failed on it${timedOut}, so no pull request was opened.`;
  }
  const reasons: Record<string, string> = {
    exit_step_limit: `The agent reached its step limit (${steps} steps) without a change that passes the tests.`,
    exit_cost: "The agent reached its cost limit before submitting a change.",
    exit_time: "The agent ran out of time before submitting a change.",
    exit_context: "The conversation outgrew the model's context window before a change was submitted.",
    exit_format: "The model kept answering in a form the agent could not parse.",
    exit_api: "The model API kept failing; try again later.",
    exit_replay_exhausted: "The recorded trajectory ended before a change was submitted.",
    exit_error: "The agent stopped on an internal error.",
  };
  const exit = exitOf(trajectory.info.exit_status);
  if ((exit?.reason === "submitted" || exit?.keptChange) && !trajectory.info.submission?.trim()) {
    return "The agent finished without changing anything, so there is nothing to propose.";
  }
  return reasons[status] ?? `The agent stopped (${status}) without a change that passes the tests.`;
}
