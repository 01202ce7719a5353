import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxLimits, SandboxProvider, Trajectory } from "../../src/contracts.js";
import { type AgentRunner, gatePassed } from "./agent.js";
import { runBaseline, type TestRun } from "./baseline.js";
import { cloneRepository } from "./checkout.js";
import { makeCheckoutRoot } from "./checkout-dirs.js";
import { type CommitIdentity, commitPatch, pushFixBranch } from "./commit.js";
import { createGate, proveTests, type TestProof } from "./gate.js";
import { type PublishedPullRequest, publishPullRequest } from "./publish-step.js";
import { startSandbox } from "./sandbox.js";
import { runSetup } from "./setup.js";

/** The repository config as the pipeline uses it (validated from .github/agent-fix.yml by src/config/repo.ts). */
export interface PipelineRepoConfig {
  setup: string[];
  setupTimeoutMs: number;
  setupNetwork: boolean;
  testCommand: string;
  testTimeoutMs: number;
  forbiddenPaths: string[];
  testPaths: string[] | undefined;
  openPrWhenBaselineFails: boolean;
  maxSteps: number;
  limits?: Partial<SandboxLimits>;
}

export type RunPhase = "queued" | "cloning" | "setting_up" | "baseline" | "agent" | "testing" | "publishing";

export interface ProgressInfo {
  step?: number;
  maxSteps?: number;
  /** One line for people, e.g. why a retry is coming. */
  note?: string;
}

/** The status comment on the issue, edited in place. Every run ends in exactly one final call. */
export interface StatusReporter {
  progress(phase: RunPhase, info?: ProgressInfo): Promise<void>;
  succeeded(pullRequest: PublishedPullRequest): Promise<void>;
  failed(reason: string, trajectory?: Trajectory): Promise<void>;
  cancelled(by: string): Promise<void>;
}

export interface PullRequestDraft {
  issueNumber: number;
  testCommand: string;
  branch: string;
  base: string;
  title: string;
  trajectory: Trajectory;
  baseline: TestRun;
  proof: TestProof;
}

/** GitHub writes after the push: one draft PR per issue, the review request, the summary. */
export interface Publisher {
  openOrUpdatePullRequest(draft: PullRequestDraft): Promise<PublishedPullRequest>;
  requestReview(pullNumber: number, login: string): Promise<void>;
  postSummary(pullNumber: number, draft: PullRequestDraft): Promise<void>;
}

export interface RunInput {
  jobId: string;
  issue: { number: number; title: string; body: string | null };
  repository: { fullName: string; cloneUrl: string; defaultBranch: string };
  requestedBy: string;
  /** A fresh installation token each call, with only its step's permissions (clone reads, push writes). */
  token: (purpose: "clone" | "push") => Promise<string>;
  /** Parses and validates the checkout's .github/agent-fix.yml; throws ConfigError naming the field. */
  loadConfig: (checkoutDir: string) => Promise<PipelineRepoConfig>;
  setupSecrets: Record<string, string>;
  identity: CommitIdentity;
  sandboxes: SandboxProvider;
  /** The agent loop for this repository's config (model, limits, tools). */
  agentFor: (config: PipelineRepoConfig) => Promise<AgentRunner>;
  publisher: Publisher;
  status: StatusReporter;
  signal: AbortSignal;
  /** Where host checkouts go; a temp dir by default. */
  workRoot?: string;
  /**
   * Review runs: the fix branch to start from, cloned instead of the default branch and pushed to
   * without force (a new commit on top of the reviewed one).
   */
  existingBranch?: string;
  /** The commit's first line when not the issue's title (review runs). */
  commitTitle?: string;
}

/** Milliseconds spent in each step (for logs and bench/pipeline.ts). */
export type RunTimings = Partial<
  Record<"clone" | "sandbox" | "setup" | "baseline" | "agent" | "tests" | "publish", number>
>;

export type RunOutcome = { timings: RunTimings } & (
  | { kind: "pull_request"; number: number; url: string; trajectory: Trajectory }
  | { kind: "no_pull_request"; reason: string; trajectory: Trajectory | null }
);

/**
 * The steps of one fix job, in order. Errors propagate (the processor maps them to retry or not and
 * finalises the status comment); an outcome without a pull request is reported here.
 */
export async function runFix(input: RunInput): Promise<RunOutcome> {
  const { signal, status } = input;
  const timings: RunTimings = {};
  let mark = Date.now();
  /** Adds the time since the last lap to `step`. */
  const lap = (step: keyof RunTimings) => {
    const now = Date.now();
    timings[step] = (timings[step] ?? 0) + (now - mark);
    mark = now;
  };
  let disposal: Promise<void> | undefined;
  // Marked with this worker's id: the reaper removes it should the worker die mid-run.
  const root = await makeCheckoutRoot(input.workRoot);
  try {
    void status.progress("cloning").catch(() => {});
    const checkout = await cloneRepository({
      cloneUrl: input.repository.cloneUrl,
      token: await input.token("clone"),
      dir: join(root, "repo"),
      branch: input.existingBranch ?? input.repository.defaultBranch,
      signal,
    });
    const config = await input.loadConfig(checkout.dir);
    lap("clone");

    void status.progress("setting_up").catch(() => {});
    const sandbox = await startSandbox(input.sandboxes, {
      sourceDir: checkout.dir,
      jobId: input.jobId,
      networkForSetup: config.setupNetwork && config.setup.length > 0,
      ...(config.limits ? { limits: config.limits } : {}),
    });
    lap("sandbox");
    const onAbort = () => void sandbox.dispose().catch(() => {});
    signal.addEventListener("abort", onAbort, { once: true });
    let trajectory: Trajectory;
    let baseline: TestRun;
    let proof: TestProof;
    const test = { command: config.testCommand, timeoutMs: config.testTimeoutMs };
    try {
      await runSetup(sandbox, {
        commands: config.setup,
        secrets: input.setupSecrets,
        networkWasOn: config.setupNetwork && config.setup.length > 0,
        timeoutMs: config.setupTimeoutMs,
        signal,
      });
      lap("setup");
      void status.progress("baseline").catch(() => {});
      baseline = await runBaseline(sandbox, test, signal);
      lap("tests");
      if (!baseline.passed && !config.openPrWhenBaselineFails) {
        const reason =
          `The tests already fail on ${input.existingBranch ?? input.repository.defaultBranch} before any change ` +
          `(\`${config.testCommand}\` exited ${baseline.exitCode}), so a passing run could not be told apart. ` +
          "Fix the tests, or set `openPullRequestWhenBaselineFails: true` in .github/agent-fix.yml.";
        await status.failed(reason);
        return { kind: "no_pull_request", reason, trajectory: null, timings };
      }
      void status.progress("agent", { step: 0, maxSteps: config.maxSteps }).catch(() => {});
      const runAgent = await input.agentFor(config);
      const stepStatus = throttled(
        (update: { phase: RunPhase; info: ProgressInfo }) => status.progress(update.phase, update.info),
        2_000,
      );
      try {
        trajectory = await runAgent({
          sandbox,
          issue: { ...input.issue, body: input.issue.body ?? "" },
          repoName: input.repository.fullName,
          gate: createGate(sandbox, test, () => stepStatus.push({ phase: "testing", info: {} })),
          onStep: ({ step }) =>
            stepStatus.push({ phase: "agent", info: { step, maxSteps: config.maxSteps } }),
          signal,
        });
      } finally {
        stepStatus.stop();
      }
      signal.throwIfAborted();
      lap("agent");
      // The gate's test runs happened inside the agent's time: move them to the tests' account.
      const gateMs = trajectory.info.gate.reduce((sum, record) => sum + record.durationMs, 0);
      timings.agent = (timings.agent ?? 0) - gateMs;
      timings.tests = (timings.tests ?? 0) + gateMs;
      if (!gatePassed(trajectory)) {
        const reason = explainNoPullRequest(trajectory, config.testCommand);
        await status.failed(reason, trajectory);
        return { kind: "no_pull_request", reason, trajectory, timings };
      }
      proof = await proveTests(sandbox, test, trajectory.info.submission ?? "", config.testPaths, signal);
      lap("tests");
    } finally {
      signal.removeEventListener("abort", onAbort);
      // Removed while the change is published; awaited before the status says done (and in every case below).
      disposal = sandbox.dispose().catch(() => {});
    }
    lap("sandbox");

    void status.progress("publishing").catch(() => {});
    await commitPatch({
      dir: checkout.dir,
      patch: trajectory.info.submission ?? "",
      identity: input.identity,
      issueNumber: input.issue.number,
      issueTitle: input.commitTitle ?? input.issue.title,
      forbiddenPaths: config.forbiddenPaths,
    });
    const branch = await pushFixBranch({
      dir: checkout.dir,
      issueNumber: input.issue.number,
      token: await input.token("push"),
      signal,
      ...(input.existingBranch ? { force: false } : {}),
    });
    const draft: PullRequestDraft = {
      issueNumber: input.issue.number,
      testCommand: config.testCommand,
      branch,
      base: input.repository.defaultBranch,
      title: input.issue.title,
      trajectory,
      baseline,
      proof,
    };
    const pr = await publishPullRequest({
      publisher: input.publisher,
      status,
      draft,
      requestedBy: input.requestedBy,
      alongside: disposal,
    });
    lap("publish");
    return { kind: "pull_request", number: pr.number, url: pr.url, trajectory, timings };
  } finally {
    await disposal;
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * Status updates during the agent's steps: at most one every `intervalMs`, the latest one winning, and
 * never awaited by the loop (a slow GitHub must not slow the agent) nor allowed to throw into it.
 */
function throttled<T>(
  update: (value: T) => Promise<void>,
  intervalMs: number,
): { push: (value: T) => void; stop: () => void } {
  let last = 0;
  let pending: T | null = null;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (pending === null) return;
    const value = pending;
    pending = null;
    last = Date.now();
    void update(value).catch(() => {});
  };
  let stopped = false;
  return {
    push(value) {
      if (stopped) return;
      pending = value;
      if (timer) return;
      timer = setTimeout(flush, Math.max(0, last + intervalMs - Date.now()));
      timer.unref();
    },
    // Called before any final status, so a late step line can never overwrite it.
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** Why a run opened no pull request, in words a maintainer can act on. */
export function explainNoPullRequest(trajectory: Trajectory, testCommand: string): string {
  const status = String(trajectory.info.exit_status ?? "unknown");
  const gates = trajectory.info.gate;
  const steps = trajectory.trajectory.length;
  if (gates.length > 0 && !gates.at(-1)?.passed) {
    return `The agent submitted a change ${gates.length} time(s) but \`${testCommand}\` still failed on it, so no pull request was opened.`;
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
  if (status.startsWith("submitted") && !trajectory.info.submission?.trim()) {
    return "The agent finished without changing anything, so there is nothing to propose.";
  }
  return reasons[status] ?? `The agent stopped (${status}) without a change that passes the tests.`;
}

/** Reads a file of the checkout, or null when it does not exist. */
export async function readOptional(path: string): Promise<string | null> {
  return readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
}
