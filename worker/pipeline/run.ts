import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxLimits, SandboxProvider, Trajectory } from "../../src/contracts.js";
import { AgentFixError } from "../../src/errors.js";
import { type AgentRunner, gatePassed } from "./agent.js";
import { runBaseline, type TestRun } from "./baseline.js";
import { cloneRepository } from "./checkout.js";
import { type CommitIdentity, commitPatch, fixBranch, pushFixBranch } from "./commit.js";
import { createGate, proveTests, type TestProof } from "./gate.js";
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

export type RunPhase = "cloning" | "setting_up" | "baseline" | "agent" | "publishing";

/** The status comment on the issue, edited in place. Every run ends in exactly one final call. */
export interface StatusReporter {
  progress(phase: RunPhase, detail?: string): Promise<void>;
  succeeded(pullRequest: { number: number; url: string }): Promise<void>;
  failed(reason: string, trajectory?: Trajectory): Promise<void>;
  cancelled(by: string): Promise<void>;
}

export interface PullRequestDraft {
  branch: string;
  base: string;
  title: string;
  trajectory: Trajectory;
  baseline: TestRun;
  proof: TestProof;
}

/** GitHub writes after the push: one draft PR per issue, the review request, the summary. */
export interface Publisher {
  openOrUpdatePullRequest(draft: PullRequestDraft): Promise<{ number: number; url: string }>;
  requestReview(pullNumber: number, login: string): Promise<void>;
  postSummary(pullNumber: number, draft: PullRequestDraft): Promise<void>;
}

export interface RunInput {
  jobId: string;
  issue: { number: number; title: string; body: string | null };
  repository: { fullName: string; cloneUrl: string; defaultBranch: string };
  requestedBy: string;
  /** A fresh installation token each call (clone and push happen minutes apart). */
  token: () => Promise<string>;
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
}

export type RunOutcome =
  | { kind: "pull_request"; number: number; url: string; trajectory: Trajectory }
  | { kind: "no_pull_request"; reason: string; trajectory: Trajectory | null };

/**
 * The steps of one fix job, in order. Errors propagate (the processor maps them to retry or not and
 * finalises the status comment); an outcome without a pull request is reported here.
 */
export async function runFix(input: RunInput): Promise<RunOutcome> {
  const { signal, status } = input;
  const root = await mkdtemp(join(input.workRoot ?? tmpdir(), "agent-fix-"));
  try {
    await status.progress("cloning");
    const checkout = await cloneRepository({
      cloneUrl: input.repository.cloneUrl,
      token: await input.token(),
      dir: join(root, "repo"),
      branch: input.repository.defaultBranch,
      signal,
    });
    const config = await input.loadConfig(checkout.dir);

    await status.progress("setting_up");
    const sandbox = await startSandbox(input.sandboxes, {
      sourceDir: checkout.dir,
      jobId: input.jobId,
      networkForSetup: config.setupNetwork && config.setup.length > 0,
      ...(config.limits ? { limits: config.limits } : {}),
    });
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
      await status.progress("baseline");
      baseline = await runBaseline(sandbox, test, signal);
      if (!baseline.passed && !config.openPrWhenBaselineFails) {
        const reason =
          `The tests already fail on ${input.repository.defaultBranch} before any change ` +
          `(\`${config.testCommand}\` exited ${baseline.exitCode}), so a passing run could not be told apart. ` +
          "Fix the tests, or set `open_pr_when_baseline_fails: true` in .github/agent-fix.yml.";
        await status.failed(reason);
        return { kind: "no_pull_request", reason, trajectory: null };
      }
      await status.progress("agent", `step 0 of at most ${config.maxSteps}`);
      const runAgent = await input.agentFor(config);
      trajectory = await runAgent({
        sandbox,
        issue: { ...input.issue, body: input.issue.body ?? "" },
        repoName: input.repository.fullName,
        gate: createGate(
          sandbox,
          test,
          () => void status.progress("agent", "testing the change").catch(() => {}),
        ),
        onStep: ({ step }) =>
          void status.progress("agent", `step ${step} of at most ${config.maxSteps}`).catch(() => {}),
        signal,
      });
      signal.throwIfAborted();
      if (!gatePassed(trajectory)) {
        const reason = explainNoPullRequest(trajectory, config.testCommand);
        await status.failed(reason, trajectory);
        return { kind: "no_pull_request", reason, trajectory };
      }
      proof = await proveTests(sandbox, test, trajectory.info.submission ?? "", config.testPaths, signal);
    } finally {
      signal.removeEventListener("abort", onAbort);
      await sandbox.dispose();
    }

    await status.progress("publishing");
    await commitPatch({
      dir: checkout.dir,
      patch: trajectory.info.submission ?? "",
      identity: input.identity,
      issueNumber: input.issue.number,
      issueTitle: input.issue.title,
      forbiddenPaths: config.forbiddenPaths,
    });
    const branch = await pushFixBranch({
      dir: checkout.dir,
      issueNumber: input.issue.number,
      token: await input.token(),
      signal,
    });
    const draft: PullRequestDraft = {
      branch,
      base: input.repository.defaultBranch,
      title: input.issue.title,
      trajectory,
      baseline,
      proof,
    };
    const pr = await input.publisher.openOrUpdatePullRequest(draft);
    await input.publisher.requestReview(pr.number, input.requestedBy).catch(() => {
      // The requester may be the repository owner or lack access: a missing reviewer must not fail the run.
    });
    await input.publisher.postSummary(pr.number, draft);
    await status.succeeded(pr);
    return { kind: "pull_request", ...pr, trajectory };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
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
