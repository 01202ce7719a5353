/**
 * What every run of this worker process shares, made once by the composition root (worker/main.ts):
 * plain parts and values, no factories. A run reads them; it never builds a process-wide part itself.
 */

import type { SandboxProvider } from "../../src/shared/contracts.js";
import type { CancelReason } from "../../src/shared/errors.js";
import type { LinkPolicy } from "../../src/shared/github/inert-links.js";
import type { FixJobData } from "../../src/shared/queue/index.js";
import type { PullRequestCosts } from "../../src/shared/queue/pull-costs.js";
import type { AgentFixConfig } from "../agent/config-file.js";
import type { TrajectorySink } from "../agent/trajectory.js";
import type { SetupSecretBinding } from "../config/worker-env.js";
import type { Logger } from "../log.js";
import type { OperatorRules } from "./configure/repo-rules.js";
import type { InstallationAuth } from "./open/installation-auth.js";
import type { StartRules } from "./open/still-wanted.js";
import type { IntakeLimits } from "./prepare/workspace-archive.js";
import type { LeftCheckRuns } from "./publish/left-check-runs.js";
import type { PendingPublishStore } from "./publish/pending-publishes.js";
import type { CommitIdentity } from "./push/commit.js";
import type { SpendingJob } from "./solve/monthly-spend.js";

export interface RunParts {
  /** Installation tokens for one repository each, revoked when the run ends. */
  auth: InstallationAuth;
  sandboxes: SandboxProvider;
  /** The app's commit identity (`SLUG[bot]`). */
  identity: CommitIdentity;
  /** Hosts the model's text may link to: the GitHub host and the operator's `github.linkHosts`. */
  links: LinkPolicy;
  /** Where the status and summary link a run's full trajectory (`RUN.traj`), when it is served. */
  trajectoryLinks: (run: string) => TrajectoryLink;
  /** What the agent of a run is made from (solve/agent-runner.ts). */
  agent: AgentParts;
  /** The operator's rules the repository's config is read under (configure/repo-config.ts). */
  configRules: OperatorRules;
  /** AGENT_FIX_SETUP_SECRETS, each bound to a repository id and installation. */
  setupSecrets: readonly SetupSecretBinding[];
  /** What starts a run (the label, the bots it counts for): each attempt checks it still holds. */
  startRules: StartRules;
  /** A cancel that arrived before this worker held the job. */
  pendingCancel(jobId: string): Promise<CancelReason | null>;
  /**
   * Called for a cancelled job: a start that arrived while the cancel was under way was refused as a
   * duplicate then, so the issue is looked at again. The promise says when `octokit` is no longer used.
   */
  afterCancel?(job: FixJobData, octokit: unknown): Promise<void> | undefined;
  /** Tested changes whose push or publishing failed: the job's next attempt only pushes and publishes them. */
  pendingPublishes?: PendingPublishStore | undefined;
  /** The commits jobs' check runs are on while in progress: whatever ends a job ends its check run too. */
  leftCheckRuns?: LeftCheckRuns | undefined;
  /** The model cost of every run on each of the app's pull requests: rounds stop at the operator's ceiling. */
  pullCosts?: PullRequestCosts | undefined;
  /** Where host checkouts go; a temp dir by default. */
  workRoot?: string | undefined;
  /** What the host takes in from a run's sandboxes: the operator's limits. */
  intake: IntakeLimits;
  /** The process's logger; each job logs through a child of it. */
  logger: Logger;
}

export interface TrajectoryLink {
  trajectoryUrl?: string;
  /** Whether the run has written its trajectory yet: a run that wrote none links none. */
  trajectoryWritten?: () => boolean;
}

export interface AgentParts {
  /** The operator's configuration: config/default.yaml overlaid by AGENT_FIX_CONFIG. */
  operator: AgentFixConfig;
  /** Overrides every model choice (tests, demo, operators pinning a model): `openai:NAME` or `replay:FILE`. */
  modelOverride?: string | undefined;
  /** Whether a repository's config may name a `replay:FILE` model (tests and the demo only). */
  allowRepoReplay: boolean;
  /** Where trajectories are written, one `RUN.traj` per run. */
  trajectoryDir: string;
  /** Where every process of the deployment reads a run's trajectory, after each step (trajectory-sink.ts). */
  trajectorySink?: ((job: FixJobData, run: string) => TrajectorySink) | undefined;
  env: NodeJS.ProcessEnv;
  /** Told each model call's cost as it is billed: the installation's monthly budget, a round's pull request's total. */
  spendOf?: ((job: SpendingJob) => (costUsd: number) => Promise<void>) | undefined;
}
