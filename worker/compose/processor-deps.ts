import { DEFAULT_WORKSPACE_SIZE, parseSize } from "../../sandbox/docker-spec.js";
import { githubWebUrl } from "../../src/config/env.js";
import type { SandboxProvider } from "../../src/contracts.js";
import { linkPolicy } from "../../src/github/inert-links.js";
import {
  type connectRedis,
  type createFixQueue,
  DEFAULT_QUEUE_NAME,
  readCancelRequest,
} from "../../src/queue/index.js";
import { createTrajectoryStore, type TrajectoryBlobs } from "../../src/trajectory-store.js";
import { type SetupSecretBinding, setupSecretsFor } from "../config/worker-env.js";
import type { fairnessParts } from "../fairness/wiring.js";
import { jobLogger, type Logger } from "../log.js";
import { createAgentRunner, type loadOperatorConfig } from "../pipeline/agent-runner.js";
import { type LoadedRepoConfig, loadRepoConfig } from "../pipeline/config.js";
import type { ProcessorDeps } from "../pipeline/fix-job.js";
import { pendingPublishes } from "../pipeline/pending-publish.js";
import { githubPublisher } from "../pipeline/publish.js";
import { requeueAfterCancel } from "../pipeline/requeue.js";
import { reviewPublisher } from "../pipeline/review.js";
import { storeTrajectories } from "../pipeline/trajectory-sink.js";
import type { IntakeLimits } from "../pipeline/workspace-archive.js";
import type { WorkerSettings } from "./built-worker.js";
import { statusOf, trajectoryLinks } from "./trajectory-links.js";

/** What processorDeps wires together, made by createProcessorFromEnv. */
interface BuiltParts {
  env: NodeJS.ProcessEnv;
  settings: WorkerSettings;
  logger: Logger;
  operator: Awaited<ReturnType<typeof loadOperatorConfig>>;
  auth: ProcessorDeps["auth"];
  identity: ProcessorDeps["identity"];
  sandboxes: SandboxProvider;
  redis: Awaited<ReturnType<typeof connectRedis>>;
  producer: ReturnType<typeof createFixQueue>;
  /** AGENT_FIX_SETUP_SECRETS, each entry bound to a repository id and installation. */
  secrets: SetupSecretBinding[];
  trajectoryDir: string;
  fairness: ReturnType<typeof fairnessParts>;
  /** The S3-compatible bucket of the trajectories, when configured; else Redis. */
  blobs: TrajectoryBlobs | undefined;
}

type Deps = ProcessorDeps<LoadedRepoConfig>;

/** The per-job parts of pipeline/fix-job.ts, built once per process. */
export function processorDeps(parts: BuiltParts): Deps {
  const { settings, logger, redis, secrets } = parts;
  const names = { prefix: settings.AGENT_FIX_QUEUE_PREFIX, name: DEFAULT_QUEUE_NAME, redis };
  const linkTo = trajectoryLinks(settings, parts.trajectoryDir);
  const allowRepoReplay = settings.AGENT_FIX_ALLOW_REPLAY_MODELS === "true";
  // The model's text may link to the GitHub host and the operator's hosts only (inert-links.ts).
  const links = linkPolicy(githubWebUrl(settings), parts.operator.github.linkHosts);
  return {
    afterCancel: requeueAfterCancel({ producer: parts.producer, label: settings.AGENT_FIX_LABEL, logger }),
    auth: parts.auth,
    pendingPublishes: pendingPublishes(redis, names),
    sandboxes: parts.sandboxes,
    identity: parts.identity,
    links,
    status: statusOf(settings, logger, links),
    publisher: (octokit, job, run) =>
      job.trigger === "review"
        ? reviewPublisher(octokit, job, { ...linkTo(run), links })
        : githubPublisher(octokit, job, { ...linkTo(run), links }),
    agent: agentRunnerFactory(parts, allowRepoReplay),
    loadConfig: repoConfigLoader(parts, allowRepoReplay),
    setupSecrets: (repository, fullName) =>
      setupSecretsFor(secrets, repository, fullName, (message) => logger.warn(message)),
    startRules: { label: settings.AGENT_FIX_LABEL, labelBots: settings.AGENT_FIX_LABEL_BOTS },
    pendingCancel: async (jobId) => {
      const request = await readCancelRequest(names, jobId);
      return request ? { kind: "cancelled", by: request.by, reason: request.reason } : null;
    },
    ...(settings.AGENT_FIX_WORK_DIR ? { workRoot: settings.AGENT_FIX_WORK_DIR } : {}),
    intake: intakeLimits(settings),
    logger,
  };
}

/** The operator's limits on what the host takes in from a sandbox, from the worker's environment. */
function intakeLimits(settings: WorkerSettings): IntakeLimits {
  const workspace = settings.AGENT_FIX_WORKSPACE_SIZE ?? DEFAULT_WORKSPACE_SIZE;
  return {
    workspaceBytes: parseSize(workspace),
    workspaceFiles: settings.AGENT_FIX_WORKSPACE_MAX_FILES,
    changeFiles: settings.AGENT_FIX_CHANGE_MAX_FILES,
    changeBytes: parseSize(settings.AGENT_FIX_CHANGE_MAX_BYTES),
  };
}

/** The agent of a run, from the repository config loadConfig returned (its agent's settings). */
function agentRunnerFactory(parts: BuiltParts, allowRepoReplay: boolean): Deps["agent"] {
  const { env, settings, logger, operator, redis, trajectoryDir } = parts;
  const sinkFor = storeTrajectories(
    createTrajectoryStore(redis, {
      prefix: settings.AGENT_FIX_QUEUE_PREFIX,
      retentionDays: settings.AGENT_FIX_TRAJECTORY_RETENTION_DAYS,
      maxBytes: settings.AGENT_FIX_TRAJECTORY_MAX_BYTES,
      ...(parts.blobs ? { blobs: parts.blobs } : {}),
    }),
    logger,
  );
  return (config, job, run) =>
    createAgentRunner(
      {
        operator,
        trajectoryDir,
        trajectorySink: sinkFor(job, run),
        env,
        allowRepoReplay,
        logger: jobLogger(logger, job),
        installation: job.installationId,
        spend: parts.fairness.spendOf(job.installationId),
        ...(settings.AGENT_FIX_MODEL ? { modelOverride: settings.AGENT_FIX_MODEL } : {}),
      },
      {
        ...config.agent,
        testCommand: config.testCommand,
        // A review run answers a review on a pull request already open: no template to fill in.
        pullRequestTemplate: job.trigger === "review" ? undefined : config.agent.pullRequestTemplate,
      },
      run,
    );
}

/** The repository's .github/agent-fix.yml (and its org's), under the operator's policy. */
function repoConfigLoader(parts: BuiltParts, allowRepoReplay: boolean): Deps["loadConfig"] {
  const { settings, operator } = parts;
  const defaultMaxSteps = operator.agent.limits.maxSteps;
  return (job, { api, orgApi, defaultBranch }) =>
    loadRepoConfig(
      { repo: api, org: orgApi },
      { owner: job.owner, repo: job.repo, defaultBranch },
      {
        defaultMaxSteps,
        policy: operator.repository,
        model: operator.model,
        modelOverride: settings.AGENT_FIX_MODEL,
        allowReplayModels: allowRepoReplay,
        // Probed once per image id: which of the operator's images meets the repository's declared versions.
        toolchains: parts.sandboxes.toolchains,
      },
    );
}
