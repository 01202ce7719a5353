/** What a fix job (fix-job.ts) is given once per process, and what it holds while it runs. */

import type { Job } from "bullmq";
import type { ProbotOctokit } from "probot";
import type { SandboxProvider } from "../../src/contracts.js";
import type { LinkPolicy } from "../../src/github/inert-links.js";
import type { FixJobData } from "../../src/queue/index.js";
import type { Logger } from "../log.js";
import type { AgentRunner } from "./agent.js";
import type { InstallationAuth, RunCredentials } from "./auth.js";
import type { AbortReason } from "./cancel.js";
import type { CommitIdentity } from "./commit.js";
import type { RepositoryIdentity } from "./environment-key.js";
import type { KeptChange, PendingPublishStore } from "./pending-publish.js";
import type { StartRules } from "./still-wanted.js";
import type { PipelineRepoConfig, Publisher, StatusReporter } from "./types.js";
import type { IntakeLimits } from "./workspace-archive.js";

/**
 * What one job needs, built once per process (or per test). `C` is the repository config loadConfig
 * returns; the same value reaches agent().
 */
export interface ProcessorDeps<C extends PipelineRepoConfig = PipelineRepoConfig> {
  auth: InstallationAuth;
  sandboxes: SandboxProvider;
  /** The app's commit identity (`SLUG[bot]`). */
  identity: CommitIdentity;
  /** Hosts the model's text may link to (the GitHub host, the operator's `github.linkHosts`); default github.com. */
  links?: LinkPolicy;
  /** The status comment of a job. `run` names this run: its trajectory is `run.traj` (see runName). */
  status(octokit: ProbotOctokit, job: FixJobData, run: string): StatusReporter;
  publisher(octokit: ProbotOctokit, job: FixJobData, run: string): Publisher;
  /** The agent for this repository's config (model, limits, tools). */
  agent(config: C, job: FixJobData, run: string): Promise<AgentRunner>;
  /**
   * The repository's config as it is on the default branch, read through the installation's client:
   * never from the checkout, which for a review run holds the agent's own branch.
   */
  loadConfig(
    job: FixJobData,
    source: { api: ProbotOctokit; orgApi: ProbotOctokit | null; defaultBranch: string },
  ): Promise<C>;
  /**
   * Operator-configured setup secrets of the repository with this id in this installation (never the
   * GitHub token); `fullName`, its current name, only for the log when the config names it otherwise.
   */
  setupSecrets(repository: RepositoryIdentity, fullName: string): Record<string, string>;
  /** What starts a run (the label, the bots it counts for): each attempt checks it still holds (still-wanted.ts). */
  startRules: StartRules;
  /** A cancel that arrived before this worker held the job. */
  pendingCancel(jobId: string): Promise<AbortReason | null>;
  /**
   * Called for a cancelled job once it has left the active state: a start that arrived while the
   * cancel was under way (label removed and added back quickly) was refused as a duplicate then,
   * so the issue is looked at again and re-queued if it still asks for a run (see requeue.ts).
   */
  afterCancel?(job: FixJobData, octokit: ProbotOctokit): Promise<void> | undefined;
  workRoot?: string;
  /** What the host takes in from a run's sandboxes: the operator's limits. */
  intake?: IntakeLimits;
  /** The process's logger; each job logs through a child of it (jobLogger). */
  logger?: Logger;
  /** Tested changes whose push or publishing failed: the job's next attempt only pushes and publishes them. */
  pendingPublishes?: PendingPublishStore;
}

/** One job as processFixJob holds it. */
export interface JobContext {
  job: Job<FixJobData>;
  data: FixJobData;
  credentials: RunCredentials;
  signal: AbortSignal;
  afterCancel: (octokit: ProbotOctokit) => void;
  finishing: (() => void) | undefined;
  log: Logger;
}

/** What processWith set up before the run: the client, the change kept before, the run's name and status. */
export interface RunContext {
  octokit: ProbotOctokit;
  kept: KeptChange | null | undefined;
  pendingKey: string;
  run: string;
  status: StatusReporter;
  /** Hosts text in the status may link to: an error can quote the model's diff. */
  links: LinkPolicy;
}
