/**
 * What the pipeline's steps and the GitHub side share: the repository config as the pipeline reads it,
 * a run's input and outcome, the status comment, the pull request draft and its publisher. Types only,
 * so the orchestrator (run.ts) and the steps can all import them without importing each other.
 */
import type {
  SandboxLimits,
  SandboxProvider,
  SetupUser,
  Trajectory,
  WorkspaceEnv,
} from "../../src/contracts.js";
import type { BaselineFailure } from "../../src/github/baseline-failure.js";
import type { LinkPolicy } from "../../src/github/inert-links.js";
import type { LeftWork } from "../../src/github/left-work.js";
import type { Logger } from "../log.js";
import type { AgentRunner } from "./agent.js";
import type { TestRun } from "./baseline.js";
import type { CommitIdentity } from "./commit.js";
import type { ImageBuild } from "./devcontainer-build.js";
import type { RepositoryIdentity } from "./environment-key.js";
import type { TestProof } from "./gate.js";
import type { UnpushedChange } from "./push-step.js";
import type { DetectedSetup } from "./setup.js";
import type { IntakeLimits } from "./workspace-archive.js";

/** An open pull request as the status reports it: whether a draft, and what did not work after it opened. */
export interface PublishedPullRequest {
  number: number;
  url: string;
  /** false when GitHub refused a draft in this repository. */
  draft?: boolean;
  /** false when the review request failed (the reason is in `problems`). */
  reviewRequested?: boolean;
  problems?: string[];
}

export type RunPhase = "queued" | "cloning" | "setting_up" | "agent" | "testing" | "publishing";

export interface ProgressInfo {
  step?: number;
  maxSteps?: number;
  /** One line for people, e.g. why a retry is coming. */
  note?: string;
}

/** The status comment on the issue, edited in place. Every run ends in exactly one final call. */
export interface StatusReporter {
  /** Rejects when the edit failed, which the reporter has logged; callers go on (progressIsBestEffort). */
  progress(phase: RunPhase, info?: ProgressInfo): Promise<void>;
  succeeded(pullRequest: PublishedPullRequest): Promise<void>;
  /**
   * `work`: the change the agent left when it stopped on a limit, with its tests' result; `baseline`: the
   * tests that failed before any change and stopped the run, with what the agent had spent.
   */
  failed(reason: string, trajectory?: Trajectory, work?: LeftWork, baseline?: BaselineFailure): Promise<void>;
  cancelled(by: string): Promise<void>;
  /** Where the run's settings came from (detected commands, organisation defaults): kept in every later update. */
  configured(note: string): void;
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

/** The repository config as the pipeline uses it (validated from .github/agent-fix.yml by worker/config/repo.ts). */
export interface PipelineRepoConfig {
  setup: string[];
  /** Set when detection wrote `setup` (no file names setup commands): optional installs' fallbacks, the snippet. */
  detectedSetup?: DetectedSetup | undefined;
  setupTimeoutMs: number;
  setupNetwork: boolean;
  /** Who runs setup (root: system packages); the agent never is root. Default agent. */
  setupUser?: SetupUser;
  testCommand: string;
  testTimeoutMs: number;
  /** The operator's ceiling of `testTimeoutMs`: the gate's limit, from the baseline's time, stays under it. */
  testTimeoutCeilingMs?: number | undefined;
  forbiddenPaths: string[];
  testPaths: string[] | undefined;
  openPrWhenBaselineFails: boolean;
  maxSteps: number;
  limits?: Partial<SandboxLimits>;
  /** Where the settings came from when not (only) the repository's file: shown in the status comment. */
  configNote?: string | undefined;
  /** The image the repository chose and the operator allows (worker/pipeline/image-choice.ts); the provider's default otherwise. */
  image?: string | undefined;
  /** Or the image its devcontainer.json builds, checked (worker/pipeline/devcontainer-build.ts). */
  imageBuild?: ImageBuild | undefined;
  /** The detected commands' variables (caches, a provided Node), in every sandbox's shell for the run. */
  workspaceEnv?: WorkspaceEnv | undefined;
}

/**
 * One run's input. `C` is the repository config as loadConfig returns it: the pipeline reads only the
 * PipelineRepoConfig fields and hands the same value to agentFor, which may read more (model, tools).
 */
export interface RunInput<C extends PipelineRepoConfig = PipelineRepoConfig> {
  jobId: string;
  issue: { number: number; title: string; body: string | null };
  /** By id and installation (what binds setup secrets and kept environments), and as it is named now. */
  repository: RepositoryIdentity & { fullName: string; cloneUrl: string; defaultBranch: string };
  requestedBy: string;
  /** A fresh installation token each call, with only its step's permissions (clone reads, push writes). */
  token: (purpose: "clone" | "push") => Promise<string>;
  /** The repository's .github/agent-fix.yml (and its owner's) through the contents API, validated; throws ConfigError naming the field. */
  loadConfig: () => Promise<C>;
  setupSecrets: Record<string, string>;
  identity: CommitIdentity;
  /** Hosts the model's text may link to; others are made inert in the commit message too. */
  links?: LinkPolicy;
  sandboxes: SandboxProvider;
  /** The agent loop for this repository's config (model, limits, tools). */
  agentFor: (config: C) => Promise<AgentRunner>;
  publisher: Publisher;
  status: StatusReporter;
  signal: AbortSignal;
  /** Where host checkouts go; a temp dir by default. */
  workRoot?: string;
  /** What the host takes in from the run's sandboxes (DEFAULT_INTAKE_LIMITS when absent). */
  intake?: IntakeLimits;
  /**
   * Review runs: the fix branch to start from, cloned instead of the default branch and pushed to
   * without force (a new commit on top of the reviewed one).
   */
  existingBranch?: string;
  /** The commit's first line when not the issue's title (review runs). */
  commitTitle?: string;
  /** Keeps a tested change whose push failed in a way a later attempt may get through (see push-step.ts). */
  keepUnpushed?: ((draft: PullRequestDraft, change: UnpushedChange) => Promise<void>) | undefined;
  /** The job's logger. */
  logger?: Logger | undefined;
}

export type RunStep = "clone" | "sandbox" | "setup" | "baseline" | "agent" | "tests" | "publish";

/**
 * Milliseconds spent in each step (for logs and bench/pipeline.ts), and, under `start_` keys, where the
 * time to the agent's first step went (bench/warm.ts): a warm start's prepare steps, the agent's sandbox.
 */
export type RunTimings = Partial<Record<RunStep | `start_${string}`, number>>;

export type RunOutcome = { timings: RunTimings } & (
  | { kind: "pull_request"; number: number; url: string; trajectory: Trajectory }
  | { kind: "no_pull_request"; reason: string; trajectory: Trajectory | null }
);

/** The catch of a progress update: a progress line is best effort, and the reporter logs its failure. */
export function progressIsBestEffort(): void {}
