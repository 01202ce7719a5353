/**
 * Steps 7 to 9 of docs/architecture.md: the agent works in its sandbox; each submission is gated by the
 * tests on the change as the host computed it from the workspace's files, in a fresh sandbox; after a pass,
 * the proof that the new tests fail without the fix. Returns the change the last gate tested, the one to
 * publish.
 */
import type { Sandbox, Trajectory } from "../../src/contracts.js";
import type { LeftWork } from "../../src/github/left-work.js";
import { exitOf } from "../agent/exit.js";
import type { Logger } from "../log.js";
import { type AgentRunner, gatePassed } from "./agent.js";
import type { TestRun } from "./baseline.js";
import { BaselineStop } from "./baseline-alongside.js";
import { createGate, type GateSetup, proveTests, type TestedChange, type TestProof } from "./gate.js";
import { captureLeftWork, endingOf } from "./left-work.js";
import { timeoutWords } from "./test-verdicts.js";
import { throttled } from "./throttled.js";
import { progressIsBestEffort } from "./types.js";

type Phase = "agent" | "testing";
type Timings = Partial<Record<"agent" | "tests" | "sandbox", number>>;

interface AgentPhaseInput {
  sandbox: Sandbox;
  gateSetup: GateSetup;
  config: { maxSteps: number; testCommand: string; testPaths: string[] | undefined };
  input: {
    agentFor: () => Promise<AgentRunner>;
    issue: { number: number; title: string; body: string | null };
    repository: { fullName: string };
    signal: AbortSignal;
    /** Setup's secrets: unfinished work holding one of their values is not shown. */
    setupSecrets: Record<string, string>;
    logger?: Logger | undefined;
    status: {
      progress(phase: Phase, info?: { step?: number; maxSteps?: number }): Promise<void>;
      failed(reason: string, trajectory?: Trajectory, work?: LeftWork): Promise<void>;
    };
  };
  timings: Timings;
  lap: (step: keyof Timings) => void;
  /** Called once the agent is done with its sandbox. */
  onAgentDone: () => void;
  /**
   * The baseline running alongside (worker/pipeline/baseline-alongside.ts): each gate verdict and the
   * end of the phase wait for it, and its rejection (the run cannot go on) ends the phase. Without it the
   * baseline ran before, and the first gate's sandbox starts with the agent.
   */
  baseline?: Promise<TestRun>;
}

type AgentPhaseOutcome =
  | { kind: "no_pull_request"; reason: string; trajectory: Trajectory }
  /** The baseline stopped the run while the agent worked: the caller writes the status, with the agent's spend. */
  | { kind: "baseline_stopped"; stop: BaselineStop; trajectory: Trajectory }
  | { kind: "gated"; trajectory: Trajectory; tested: TestedChange; proof: TestProof };

export async function runAgentPhase(phase: AgentPhaseInput): Promise<AgentPhaseOutcome> {
  const { config, input, timings } = phase;
  const { signal, status } = input;
  void status.progress("agent", { step: 0, maxSteps: config.maxSteps }).catch(progressIsBestEffort);
  const runAgent = await input.agentFor();
  const stepStatus = throttled(
    (update: { phase: Phase; info: { step?: number; maxSteps?: number } }) =>
      status.progress(update.phase, update.info),
    2_000,
  );
  let gateTestMs = 0;
  const { baseline } = phase;
  // The gate's tests run while the baseline may still run; its verdict waits for the baseline.
  const gateSetup = baseline ? { ...phase.gateSetup, baseline } : phase.gateSetup;
  const gate = createGate(gateSetup, phase.sandbox, (run) => {
    gateTestMs += run.durationMs;
    stepStatus.push({ phase: "testing", info: {} });
  });
  // The first gate's sandbox starts while the agent works (the baseline's start does it when there is one).
  if (!baseline) phase.gateSetup.sandboxes.prewarm(phase.gateSetup.prepared.dir);
  let trajectory: Trajectory;
  try {
    trajectory = await runAgent({
      sandbox: phase.sandbox,
      issue: { ...input.issue, body: input.issue.body ?? "" },
      repoName: input.repository.fullName,
      gate: gate.gate,
      onStep: ({ step }) => stepStatus.push({ phase: "agent", info: { step, maxSteps: config.maxSteps } }),
      signal,
      baseCommit: phase.gateSetup.prepared.base.commit,
    });
  } finally {
    stepStatus.stop();
  }
  // A run the baseline stops ends with the baseline's reason, whatever the agent did meanwhile.
  const stop = await baselineStopAfterAgent(signal, baseline);
  if (stop) return { kind: "baseline_stopped", stop, trajectory };
  signal.throwIfAborted();
  phase.lap("agent");
  accountGateTime(timings, trajectory, gateTestMs);
  const tested = gate.lastTested();
  if (!gatePassed(trajectory) || !tested || tested.patch !== trajectory.info.submission) {
    const reason = explainNoPullRequest(trajectory, config.testCommand, gate.lastRun()?.run);
    // Read before the agent's sandbox goes: a run stopped by a limit keeps its work visible.
    const work = await captureLeftWork({
      trajectory,
      gate,
      setup: gateSetup,
      workspace: phase.sandbox,
      secrets: input.setupSecrets,
      signal,
      onTesting: () => void status.progress("testing").catch(progressIsBestEffort),
      logger: input.logger,
    });
    phase.onAgentDone();
    phase.lap("sandbox");
    await status.failed(reason, trajectory, work ?? undefined);
    return { kind: "no_pull_request", reason, trajectory };
  }
  phase.onAgentDone();
  const proof = await proveTests(phase.gateSetup, tested, config.testPaths, signal);
  phase.lap("sandbox");
  const proofTestMs = proof.before?.durationMs ?? 0;
  timings.sandbox = (timings.sandbox ?? 0) - proofTestMs;
  timings.tests = (timings.tests ?? 0) + proofTestMs;
  return { kind: "gated", trajectory, tested, proof };
}

/**
 * Whether the baseline stopped the run, once the agent's loop has returned: it aborted the agent's
 * signal, or it fails now. null when it did not (a cancel of the run is for the caller to throw).
 */
async function baselineStopAfterAgent(
  signal: AbortSignal,
  baseline: Promise<unknown> | undefined,
): Promise<BaselineStop | null> {
  if (signal.aborted) return signal.reason instanceof BaselineStop ? signal.reason : null;
  try {
    await baseline;
    return null;
  } catch (error) {
    if (error instanceof BaselineStop) return error;
    throw error;
  }
}

/**
 * The gates ran inside the agent's time: their test runs go to the tests' account, the rest (fresh
 * sandboxes, exporting the workspace, computing the change) to the sandboxes'.
 */
function accountGateTime(timings: Timings, trajectory: Trajectory, gateTestMs: number): void {
  const gateMs = trajectory.info.gate.reduce((sum, record) => sum + record.durationMs, 0);
  timings.agent = (timings.agent ?? 0) - gateMs;
  timings.tests = (timings.tests ?? 0) + gateTestMs;
  timings.sandbox = (timings.sandbox ?? 0) + gateMs - gateTestMs;
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
