/**
 * Steps 5 to 9 of docs/architecture.md for one run (worker/pipeline/run.ts): the prepared tree, the
 * agent's sandbox, the baseline alongside the agent, the agent's phase with its gate and proof.
 */
import { join } from "node:path";
import type { Sandbox, Trajectory } from "../../src/contracts.js";
import { runAgentPhase } from "./agent-phase.js";
import type { TestRun } from "./baseline.js";
import { BaselineStop, startBaselineAlongside } from "./baseline-alongside.js";
import { baselineReport } from "./baseline-report.js";
import { baselineTestsUsable } from "./per-test-verdict.js";
import { type PreparedTree, prepareTree } from "./prepare.js";
import type { Checkout, Gated, RunState } from "./run-state.js";
import { RunSandboxes } from "./sandbox.js";
import { fallbackNote } from "./setup.js";
import { classifyTestFailure } from "./test-failure-class.js";
import { gateTimeLimit } from "./test-time-limit.js";
import { baselineGoesOnText, baselineStopText } from "./test-verdicts.js";
import type { TrustedTree } from "./trusted-tree.js";
import type { PipelineRepoConfig, RunInput, RunOutcome, RunTimings } from "./types.js";
import { progressIsBestEffort } from "./types.js";
import { DEFAULT_INTAKE_LIMITS, type IntakeLimits } from "./workspace-archive.js";

function runSandboxes<C extends PipelineRepoConfig>(
  input: RunInput<C>,
  trusted: TrustedTree,
  config: C,
): RunSandboxes {
  return new RunSandboxes(input.sandboxes, {
    jobId: input.jobId,
    ...(config.limits ? { limits: config.limits } : {}),
    ...(config.image ? { image: config.image } : {}),
    ...(config.workspaceEnv ? { workspaceEnv: config.workspaceEnv } : {}),
    ...(config.imageBuild
      ? {
          imageBuild: {
            // Built from the default branch's files, as setup runs on them: never the agent's branch.
            root: trusted.dir,
            context: config.imageBuild.context,
            dockerfile: config.imageBuild.dockerfile,
            bases: config.imageBuild.bases,
            name: input.repository.fullName,
          },
        }
      : {}),
  });
}

const intakeOf = (input: { intake?: IntakeLimits }) => input.intake ?? DEFAULT_INTAKE_LIMITS;

/** Steps 5 to 9: setup, baseline, agent, gate and proof, each in sandboxes removed when it is done. */
export async function testInSandboxes<C extends PipelineRepoConfig>(
  run: RunState<C>,
  checkout: Checkout,
  trusted: TrustedTree,
  config: C,
): Promise<Gated | NoPullRequest> {
  const { input } = run;
  const { signal } = input;
  void input.status.progress("setting_up").catch(progressIsBestEffort);
  const sandboxes = runSandboxes(input, trusted, config);
  const onAbort = () => void sandboxes.disposeAll();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const prepared = await prepare(run, checkout, trusted, config, sandboxes);
    return await agentAlongsideBaseline(run, config, sandboxes, prepared);
  } finally {
    signal.removeEventListener("abort", onAbort);
    const agentDisposal = run.disposal;
    run.disposal = sandboxes.disposeAll().then(() => agentDisposal);
  }
}

type NoPullRequest = Extract<RunOutcome, { kind: "no_pull_request" }>;

/** Steps 6 to 9 on the prepared tree: the agent's phase, with the baseline running alongside it. */
async function agentAlongsideBaseline<C extends PipelineRepoConfig>(
  run: RunState<C>,
  config: C,
  sandboxes: RunSandboxes,
  prepared: PreparedTree,
): Promise<Gated | NoPullRequest> {
  const { input, timings } = run;
  const test = { command: config.testCommand, timeoutMs: config.testTimeoutMs };
  // The agent (its model client) is made while the sandbox starts; an error surfaces where it is used.
  const agent = input.agentFor(config);
  agent.catch(() => {});
  const sandbox = await startAgentSandbox(run, sandboxes, prepared);
  const baseline = startBaselineAlongside({
    sandboxes,
    dir: prepared.dir,
    test,
    signal: input.signal,
    stopsRun: (result) => {
      const reason = baselineStopReason(run, config, result);
      if (reason === null) noteBaselineGoesOn(run, config, prepared, result);
      return reason;
    },
  });
  // The gate's and the proof's runs get a limit from the baseline's time (test-time-limit.ts).
  const timeLimit = () =>
    gateTimeLimit({
      configuredMs: config.testTimeoutMs,
      ceilingMs: config.testTimeoutCeilingMs ?? config.testTimeoutMs,
      baselineMs: baseline.measuredMs(),
    });
  const scratch = join(run.root, "scratch");
  const outcome = await runAgentPhase({
    sandbox,
    gateSetup: { prepared, sandboxes, test, scratch, intake: intakeOf(input), timeLimit },
    config,
    input: { ...input, signal: baseline.signal, agentFor: () => agent },
    timings,
    lap: run.lap,
    onAgentDone: () => {
      // Removed while the proof runs and the change is published; awaited before the status says done.
      run.disposal = sandboxes.dispose(sandbox);
    },
    baseline: baseline.settled,
  }).catch((error: unknown) => stoppedByBaseline(run, config, baseline.settled, error));
  if (outcome.kind === "baseline_stopped") {
    await reportBaselineStop(run, config, outcome.stop, outcome.trajectory);
    return { kind: "no_pull_request", reason: outcome.stop.reason, trajectory: outcome.trajectory, timings };
  }
  if (outcome.kind === "no_pull_request") return { ...outcome, timings };
  return { ...outcome, baseline: await foldBaselineTime(timings, baseline.settled) };
}

/** The agent's sandbox, started first: the one start the agent's first step waits for. */
async function startAgentSandbox<C extends PipelineRepoConfig>(
  run: RunState<C>,
  sandboxes: RunSandboxes,
  prepared: PreparedTree,
): Promise<Sandbox> {
  const began = performance.now();
  const sandbox = await sandboxes.start(prepared.dir);
  run.lap("sandbox");
  logStartPath(run, prepared, sandbox, performance.now() - began);
  return sandbox;
}

/** The agent phase's error as the outcome without a pull request when the baseline stopped the run. */
async function stoppedByBaseline<C extends PipelineRepoConfig>(
  run: RunState<C>,
  config: C,
  baseline: Promise<TestRun>,
  error: unknown,
): Promise<Omit<NoPullRequest, "timings">> {
  if (run.input.signal.aborted) throw error;
  // A baseline that stops the run is the first reason, as when it ran before the agent: an agent that
  // failed on its own meanwhile (no model key, say) waits for the baseline's verdict.
  const stop = error instanceof BaselineStop ? error : await baselineStopOf(baseline);
  if (!stop) throw error;
  await reportBaselineStop(run, config, stop, null);
  return { kind: "no_pull_request", reason: stop.reason, trajectory: null };
}

/** The final status of a run the baseline stopped: its reason, the tests' output, what the agent spent. */
function reportBaselineStop<C extends PipelineRepoConfig>(
  run: RunState<C>,
  config: C,
  stop: BaselineStop,
  trajectory: Trajectory | null,
): Promise<void> {
  const report = baselineReport({
    testCommand: config.testCommand,
    run: stop.run,
    timeoutMs: config.testTimeoutMs,
    failure: classifyTestFailure(stop.run),
    secrets: run.input.setupSecrets,
    trajectory,
  });
  return run.input.status.failed(stop.reason, undefined, undefined, report);
}

/** The baseline ran during the agent's time: its test run is moved to the tests' time. */
async function foldBaselineTime(timings: RunTimings, baseline: Promise<TestRun>): Promise<TestRun> {
  const baselineRun = await baseline;
  timings.agent = (timings.agent ?? 0) - baselineRun.durationMs;
  timings.tests = (timings.tests ?? 0) + baselineRun.durationMs;
  return baselineRun;
}

/** The baseline's BaselineStop once it settles; null when it passed, may fail, or failed otherwise. */
function baselineStopOf(settled: Promise<TestRun>): Promise<BaselineStop | null> {
  return settled.then(
    () => null,
    (error: unknown) => (error instanceof BaselineStop ? error : null),
  );
}

/** The status comment's line on a warm start, after the config's own note. */
function reuseNote(configNote: string | undefined, preparedAt: Date): string {
  const line = `Setup skipped: reused the environment prepared at ${preparedAt.toISOString()} (same image, setup commands and dependency files).`;
  return configNote ? `${configNote}\n\n${line}` : line;
}

/**
 * Step 5: the prepared tree (setup, or the kept environment of a warm start), from the default branch's
 * files; a review run's pull request branch is laid over it.
 */
async function prepare<C extends PipelineRepoConfig>(
  run: RunState<C>,
  checkout: Checkout,
  trusted: TrustedTree,
  config: C,
  sandboxes: RunSandboxes,
): Promise<PreparedTree> {
  const { input } = run;
  const { signal, status } = input;
  const prepared = await prepareTree({
    sandboxes,
    trusted,
    ...(checkout.dir === trusted.dir ? {} : { branch: { dir: checkout.dir, headSha: checkout.headSha } }),
    root: run.root,
    setup: {
      commands: config.setup,
      network: config.setupNetwork && config.setup.length > 0,
      timeoutMs: config.setupTimeoutMs,
      ...(config.setupUser ? { user: config.setupUser } : {}),
      detected: config.detectedSetup,
    },
    secrets: input.setupSecrets,
    intake: intakeOf(input),
    repository: {
      id: input.repository.id,
      installationId: input.repository.installationId,
      fullName: input.repository.fullName,
    },
    signal,
  });
  if (prepared.reused) status.configured(reuseNote(config.configNote, prepared.reused.preparedAt));
  if (prepared.fallbacks?.length) {
    status.configured(
      [config.configNote, ...prepared.fallbacks.map(fallbackNote)].filter(Boolean).join("\n\n"),
    );
  }
  run.lap("setup");
  return prepared;
}

/** Where the time to the agent's first step went: logged, and in the job's result (bench/warm.ts). */
function logStartPath<C extends PipelineRepoConfig>(
  run: RunState<C>,
  prepared: PreparedTree,
  sandbox: Sandbox,
  startMs: number,
): void {
  const phases = sandbox.startupPhases ?? {};
  const { timings } = run;
  timings.start_agent_sandbox = Math.round(startMs);
  for (const [step, ms] of Object.entries(prepared.steps ?? {})) timings[`start_prepare_${step}`] = ms;
  for (const [phase, ms] of Object.entries(phases)) timings[`start_sandbox_${phase}`] = Math.round(ms);
  run.input.logger?.debug({ timings: { ...run.timings } }, "agent sandbox started");
}

/**
 * The status's note when the baseline failed and the run goes on compared test by test (its tests all
 * passed and the command failed after them, or some failed before any change): kept with the config's
 * notes in every later update.
 */
function noteBaselineGoesOn<C extends PipelineRepoConfig>(
  run: RunState<C>,
  config: C,
  prepared: PreparedTree,
  baseline: TestRun,
): void {
  const tests = baseline.passed ? null : baselineTestsUsable(baseline);
  if (!tests) return;
  const { input } = run;
  const branch = input.existingBranch ?? input.repository.defaultBranch;
  const reused = prepared.reused
    ? reuseNote(config.configNote, prepared.reused.preparedAt)
    : config.configNote;
  const line = baselineGoesOnText(branch, config.testCommand, baseline, tests);
  input.status.configured(reused ? `${reused}\n\n${line}` : line);
}

/** Step 6's verdict: failing tests end the run unless the repository allows it. */
function baselineStopReason<C extends PipelineRepoConfig>(
  run: RunState<C>,
  config: C,
  baseline: TestRun,
): string | null {
  if (baseline.passed || config.openPrWhenBaselineFails) return null;
  // Tests that report each result: the gate holds a change to those that passed (per-test-verdict.ts).
  if (baselineTestsUsable(baseline)) return null;
  const { input } = run;
  return baselineStopText({
    branch: input.existingBranch ?? input.repository.defaultBranch,
    testCommand: config.testCommand,
    run: baseline,
    failure: classifyTestFailure(baseline),
    configuredMs: config.testTimeoutMs,
    ceilingMs: config.testTimeoutCeilingMs ?? config.testTimeoutMs,
  });
}
