/**
 * Composition root of the worker: builds the concrete parts from the environment (GitHub App
 * client, sandbox provider, queue, model and agent wiring) once per process, and hands them to the
 * per-job flow of pipeline/fix-job.ts, which runs the pipeline and maps errors to retry or not.
 * The one place in worker/ (beside index.ts and cli.ts) where classes are constructed.
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Job } from "bullmq";
import { createProbot } from "probot";
import { DockerSandboxProvider, defaultWorkerId } from "../sandbox/docker.js";
import { cleanWorkerImages } from "../sandbox/image-cleanup.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import { reapSandboxes, workerAliveOnThisHost } from "../sandbox/reaper.js";
import type { SandboxProvider } from "../src/contracts.js";
import { throttledOctokit, WORKER_THROTTLE } from "../src/github/throttle.js";
import { trackQueueDepth } from "../src/metrics/endpoint.js";
import {
  connectRedis,
  createFixQueue,
  DEFAULT_QUEUE_NAME,
  type FixJobData,
  readCancelRequest,
} from "../src/queue/index.js";
import { trajectoryUrl } from "../src/trajectories.js";
import { trajectoryBlobsFromEnv } from "../src/trajectory-s3.js";
import { createTrajectoryStore, type TrajectoryBlobs } from "../src/trajectory-store.js";
import { caBundleFile, cidrList, parseSetupSecrets, parseWorkerEnv } from "./config/worker-env.js";
import { fairnessParts } from "./fairness/wiring.js";
import { type HealthReport, workerHealth } from "./health.js";
import { createWorkerLogger, jobLogger, type Logger } from "./log.js";
import { meteredSandboxes } from "./metrics.js";
import { createAgentRunner, loadOperatorConfig } from "./pipeline/agent-runner.js";
import { appIdentity, probotInstallationAuth } from "./pipeline/auth.js";
import { reapCheckouts } from "./pipeline/checkout-dirs.js";
import { type LoadedRepoConfig, loadRepoConfig } from "./pipeline/config.js";
import type { FinalizeAbandoned } from "./pipeline/final-status.js";
import {
  createFixProcessor,
  finalizeAbandonedWith,
  type JobResult,
  type ProcessorDeps,
} from "./pipeline/fix-job.js";
import { pendingPublishes } from "./pipeline/pending-publish.js";
import { githubPublisher, githubStatusReporter } from "./pipeline/publish.js";
import { requeueAfterCancel } from "./pipeline/requeue.js";
import { reviewPublisher } from "./pipeline/review.js";
import { storeTrajectories } from "./pipeline/trajectory-sink.js";

interface BuiltWorker {
  /** Options for startFixWorker (worker/index.ts). */
  workerOptions: {
    redisUrl: string;
    prefix: string;
    queueName: string;
    concurrency: number;
    lockDurationMs: number;
    stalledIntervalMs?: number;
    process: (job: Job<FixJobData>, signal: AbortSignal) => Promise<JobResult>;
    admission: ReturnType<typeof fairnessParts>["admission"];
    onAbandoned: FinalizeAbandoned;
    reap?: () => Promise<unknown>;
    reaperIntervalMs?: number;
  };
  graceMs: number;
  /** The worker's /healthz and /metrics server, when AGENT_FIX_WORKER_PORT is set (worker/ops-server.ts). */
  ops?: {
    port: number;
    host: string;
    metricsToken?: string | undefined;
    health: () => Promise<HealthReport>;
  };
  /** The process's logger (LOG_LEVEL); jobs log through children of it. */
  logger: Logger;
  /** Releases what the processor holds (Redis connection). */
  close(): Promise<void>;
}

/** Builds the concrete parts from the environment: the one place the worker's classes are made. */
export async function createProcessorFromEnv(env: NodeJS.ProcessEnv): Promise<BuiltWorker> {
  const settings = parseWorkerEnv(env);
  const logger = createWorkerLogger(settings.LOG_LEVEL);
  const operator = await loadOperatorConfig(settings.AGENT_FIX_CONFIG);
  // First: a wrong S3 key or bucket stops the start with what to fix.
  const blobs = await trajectoryBlobsFromEnv(settings);
  const probot = probotFromSettings(settings);
  const auth = probotInstallationAuth(probot, logger);
  const identity = await appIdentity(probot, settings, logger);
  const tag = settings.AGENT_FIX_WORKER_TAG;
  const dockerProvider = settings.AGENT_FIX_SANDBOX === "docker" ? dockerSandboxes(settings, tag) : undefined;
  const sandboxes: SandboxProvider = meteredSandboxes(
    dockerProvider ?? new LocalSandboxProvider({ warn: (message) => logger.warn(message) }),
  );
  const redis = await connectRedis(settings.AGENT_FIX_REDIS_URL, "worker", (message) => logger.warn(message));
  const secrets = parseSetupSecrets(settings.AGENT_FIX_SETUP_SECRETS);
  const trajectoryDir = resolve(settings.AGENT_FIX_TRAJECTORY_DIR);
  await mkdir(trajectoryDir, { recursive: true });
  const producer = createFixQueue(redis, { prefix: settings.AGENT_FIX_QUEUE_PREFIX });
  const untrackQueue = trackQueueDepth(producer.queue);
  const names = { prefix: settings.AGENT_FIX_QUEUE_PREFIX, name: DEFAULT_QUEUE_NAME };
  const fairness = fairnessParts({
    redis,
    names,
    quotas: operator.quotas,
    auth,
    producer,
    logger,
    status: statusOf(settings, logger),
  });
  const deps = processorDeps({
    env,
    settings,
    logger,
    operator,
    auth,
    identity,
    sandboxes,
    redis,
    producer,
    secrets,
    trajectoryDir,
    fairness,
    blobs,
  });
  return {
    workerOptions: {
      ...workerOptionsFor(settings, deps, dockerProvider, tag, logger),
      admission: fairness.admission,
    },
    graceMs: settings.AGENT_FIX_SHUTDOWN_GRACE_SECONDS * 1000,
    ...opsSettings(settings, dockerProvider, redis),
    logger,
    close: async () => {
      untrackQueue();
      await producer
        .close()
        .catch((err: unknown) => logger.warn({ err }, "closing the producer queue failed"));
      redis.disconnect();
      blobs?.close();
    },
  };
}

type WorkerSettings = ReturnType<typeof parseWorkerEnv>;

function opsSettings(
  settings: WorkerSettings,
  docker: DockerSandboxProvider | undefined,
  redis: { status: string; ping(): Promise<unknown> },
): Pick<BuiltWorker, "ops"> {
  if (settings.AGENT_FIX_WORKER_PORT === undefined) return {};
  const engine = docker ? { engine: docker.docker, image: docker.image } : undefined;
  return {
    ops: {
      port: settings.AGENT_FIX_WORKER_PORT,
      host: settings.AGENT_FIX_WORKER_HOST,
      metricsToken: settings.AGENT_FIX_METRICS_TOKEN,
      health: workerHealth({ docker: engine, redis }),
    },
  };
}

function probotFromSettings(settings: WorkerSettings) {
  return createProbot({
    // Rate limits are waited out; client-side spacing of writes (off for the stand-ins) is shared by
    // every process of the deployment through its Redis (Probot's REDIS_URL).
    overrides: {
      Octokit: throttledOctokit({
        id: `agent-fix-${settings.APP_ID}`,
        spacing: settings.AGENT_FIX_GITHUB_THROTTLE,
        ...WORKER_THROTTLE,
      }),
    },
    env: {
      ...(settings.AGENT_FIX_GITHUB_THROTTLE ? { REDIS_URL: settings.AGENT_FIX_REDIS_URL } : {}),
      APP_ID: String(settings.APP_ID),
      ...(settings.PRIVATE_KEY ? { PRIVATE_KEY: settings.PRIVATE_KEY } : {}),
      ...(settings.PRIVATE_KEY_PATH ? { PRIVATE_KEY_PATH: settings.PRIVATE_KEY_PATH } : {}),
      ...(settings.GHE_HOST ? { GHE_HOST: settings.GHE_HOST, GHE_PROTOCOL: settings.GHE_PROTOCOL } : {}),
      LOG_LEVEL: settings.LOG_LEVEL,
    },
  });
}

function dockerSandboxes(settings: WorkerSettings, tag: string | undefined): DockerSandboxProvider {
  const caBundle = caBundleFile(settings.AGENT_FIX_CA_BUNDLE, existsSync);
  return new DockerSandboxProvider({
    ...(caBundle ? { caBundle } : {}),
    ...(settings.AGENT_FIX_SANDBOX_IMAGE ? { image: settings.AGENT_FIX_SANDBOX_IMAGE } : {}),
    ...(tag ? { workerId: `${tag}/${defaultWorkerId()}` } : {}),
    ...(settings.AGENT_FIX_WORKSPACE_TMPFS ? { workspaceTmpfsSize: settings.AGENT_FIX_WORKSPACE_TMPFS } : {}),
    ...(settings.AGENT_FIX_WORKSPACE_SIZE ? { workspaceSize: settings.AGENT_FIX_WORKSPACE_SIZE } : {}),
    ...(settings.AGENT_FIX_KEPT_ENVIRONMENTS_SIZE === "0"
      ? {}
      : {
          keptEnvironments: {
            name: settings.AGENT_FIX_KEPT_ENVIRONMENTS_NAME,
            maxSize: settings.AGENT_FIX_KEPT_ENVIRONMENTS_SIZE,
          },
        }),
    setupNetwork: {
      name: settings.AGENT_FIX_SETUP_NETWORK,
      allow: cidrList(settings.AGENT_FIX_SETUP_NETWORK_ALLOW),
      deny: cidrList(settings.AGENT_FIX_SETUP_NETWORK_DENY),
    },
  });
}

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
  secrets: Record<string, Record<string, string>>;
  trajectoryDir: string;
  fairness: ReturnType<typeof fairnessParts>;
  /** The S3-compatible bucket of the trajectories, when configured; else Redis. */
  blobs: TrajectoryBlobs | undefined;
}

/**
 * With PUBLIC_URL the status and summary link the full trajectory, served (signed, expiring) by
 * src/trajectories.ts; only once the run has written one.
 */
function trajectoryLinks(settings: WorkerSettings, trajectoryDir: string) {
  return (run: string) =>
    settings.PUBLIC_URL && settings.WEBHOOK_SECRET
      ? {
          trajectoryUrl: trajectoryUrl(settings.PUBLIC_URL, settings.WEBHOOK_SECRET, `${run}.traj`, {
            ttlMs: settings.AGENT_FIX_TRAJECTORY_LINK_DAYS * 24 * 60 * 60 * 1000,
          }),
          trajectoryWritten: () => existsSync(join(trajectoryDir, `${run}.traj`)),
        }
      : {};
}

/** The status comment of a job, as the pipeline and the admission write it. */
function statusOf(settings: WorkerSettings, logger: Logger): ProcessorDeps["status"] {
  const linkTo = trajectoryLinks(settings, resolve(settings.AGENT_FIX_TRAJECTORY_DIR));
  return (octokit, job, run) =>
    githubStatusReporter(octokit, job, { ...linkTo(run), logger: jobLogger(logger, job) });
}

function processorDeps(parts: BuiltParts): ProcessorDeps<LoadedRepoConfig> {
  const { env, settings, logger, operator, redis, trajectoryDir, secrets } = parts;
  const names = { prefix: settings.AGENT_FIX_QUEUE_PREFIX, name: DEFAULT_QUEUE_NAME, redis };
  const linkTo = trajectoryLinks(settings, trajectoryDir);
  const sinkFor = storeTrajectories(
    createTrajectoryStore(redis, {
      prefix: settings.AGENT_FIX_QUEUE_PREFIX,
      retentionDays: settings.AGENT_FIX_TRAJECTORY_RETENTION_DAYS,
      maxBytes: settings.AGENT_FIX_TRAJECTORY_MAX_BYTES,
      ...(parts.blobs ? { blobs: parts.blobs } : {}),
    }),
    logger,
  );
  const defaultMaxSteps = operator.agent.limits.maxSteps;
  const allowRepoReplay = settings.AGENT_FIX_ALLOW_REPLAY_MODELS === "true";
  return {
    afterCancel: requeueAfterCancel({ producer: parts.producer, label: settings.AGENT_FIX_LABEL, logger }),
    auth: parts.auth,
    pendingPublishes: pendingPublishes(redis, names),
    sandboxes: parts.sandboxes,
    identity: parts.identity,
    status: statusOf(settings, logger),
    publisher: (octokit, job, run) =>
      job.trigger === "review"
        ? reviewPublisher(octokit, job, linkTo(run))
        : githubPublisher(octokit, job, linkTo(run)),
    // The repository config loadConfig returned, with the agent's settings the pipeline does not read.
    agent: (config, job, run) =>
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
        { ...config.agent, testCommand: config.testCommand },
        run,
      ),
    loadConfig: (job, { api, orgApi, defaultBranch }) =>
      loadRepoConfig(
        { repo: api, org: orgApi },
        { owner: job.owner, repo: job.repo, defaultBranch },
        {
          defaultMaxSteps,
          policy: operator.repository,
          model: operator.model,
          modelOverride: settings.AGENT_FIX_MODEL,
          allowReplayModels: allowRepoReplay,
        },
      ),
    setupSecrets: (fullName) => secrets[fullName] ?? {},
    pendingCancel: async (jobId) => {
      const request = await readCancelRequest(names, jobId);
      return request ? { kind: "cancelled", by: request.by, reason: request.reason } : null;
    },
    ...(settings.AGENT_FIX_WORK_DIR ? { workRoot: settings.AGENT_FIX_WORK_DIR } : {}),
    logger,
  };
}

function workerOptionsFor(
  settings: WorkerSettings,
  deps: ProcessorDeps<LoadedRepoConfig>,
  dockerProvider: DockerSandboxProvider | undefined,
  tag: string | undefined,
  logger: Logger,
): Omit<BuiltWorker["workerOptions"], "admission"> {
  const reaper = logger.child({ component: "reaper" });
  const reaperLog = (message: string) => reaper.info(message);
  return {
    redisUrl: settings.AGENT_FIX_REDIS_URL,
    prefix: settings.AGENT_FIX_QUEUE_PREFIX,
    queueName: DEFAULT_QUEUE_NAME,
    concurrency: settings.AGENT_FIX_CONCURRENCY,
    lockDurationMs: settings.AGENT_FIX_LOCK_MS,
    ...(settings.AGENT_FIX_STALLED_INTERVAL_MS
      ? { stalledIntervalMs: settings.AGENT_FIX_STALLED_INTERVAL_MS }
      : {}),
    process: createFixProcessor(deps),
    onAbandoned: finalizeAbandonedWith(deps.auth, deps.status),
    // What workers that died (SIGKILL, OOM, host reboot) left behind, sandboxes and host checkouts,
    // is removed at start and on a timer.
    reap: () =>
      Promise.all([
        dockerProvider ? reapDockerSandboxes(dockerProvider, tag, reaperLog) : [],
        // The images it built (devcontainer builds, derived images) that nothing needs any more; tagged
        // workers (tests sharing an engine) leave the engine's images alone.
        dockerProvider && !tag ? cleanWorkerImages({ docker: dockerProvider.docker, log: reaperLog }) : [],
        reapCheckouts({
          ...(settings.AGENT_FIX_WORK_DIR ? { workRoot: settings.AGENT_FIX_WORK_DIR } : {}),
          log: reaperLog,
        }),
      ]),
    reaperIntervalMs: settings.AGENT_FIX_REAPER_INTERVAL_MS,
  };
}

/** Sandboxes of dead workers; tagged workers touch only their own group's (tests sharing an engine). */
function reapDockerSandboxes(
  provider: DockerSandboxProvider,
  tag: string | undefined,
  log: (message: string) => void,
) {
  return reapSandboxes({
    docker: provider.docker,
    log,
    ...(tag
      ? {
          maxAgeMs: Number.POSITIVE_INFINITY,
          isWorkerAlive: (id: string) =>
            !id.startsWith(`${tag}/`) || workerAliveOnThisHost(id.slice(tag.length + 1)),
        }
      : {}),
  });
}
