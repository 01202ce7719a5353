/**
 * The worker process's composition root, read top to bottom: the environment and the operator's config,
 * Redis, the GitHub App client, the sandbox provider, the stores and the parts every run shares; then the
 * queue worker (worker/jobs/) with the run (worker/run/run-job.ts) as its processor, and the ops server.
 * The only place the worker's parts are made and the only module that knows both the queue and the run.
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Job } from "bullmq";
import Docker from "dockerode";
import { createProbot } from "probot";
import { DockerEnginePool } from "../sandbox/docker/engine-pool.js";
import { dockerEngines } from "../sandbox/docker/engines.js";
import { cleanWorkerImages } from "../sandbox/docker/image-cleanup.js";
import { DockerSandboxProvider, defaultWorkerId } from "../sandbox/docker/provider.js";
import { reapSandboxes, workerAliveOnThisHost } from "../sandbox/docker/reaper.js";
import { checkSandboxRuntime } from "../sandbox/docker/runtime.js";
import { DEFAULT_WORKSPACE_SIZE, parseSize } from "../sandbox/docker/spec.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import { githubWebUrl } from "../src/shared/config/env.js";
import type { SandboxProvider } from "../src/shared/contracts.js";
import { linkPolicy } from "../src/shared/github/inert-links.js";
import { throttledOctokit, WORKER_THROTTLE } from "../src/shared/github/throttle.js";
import { trackQueueDepth } from "../src/shared/metrics/endpoint.js";
import { exitOnSignals } from "../src/shared/process-signals.js";
import type { BaseMove } from "../src/shared/queue/base-moves.js";
import {
  connectRedis,
  createFixQueue,
  DEFAULT_QUEUE_NAME,
  type FixJobData,
  readCancelRequest,
} from "../src/shared/queue/index.js";
import { pullRequestCosts } from "../src/shared/queue/pull-costs.js";
import { runUsage } from "../src/shared/queue/usage.js";
import { trajectoryUrl } from "../src/shared/trajectory-links.js";
import { trajectoryBlobsFromEnv } from "../src/shared/trajectory-s3.js";
import { createTrajectoryStore } from "../src/shared/trajectory-store.js";
import { loadConfig } from "./agent/config-file.js";
import { boundSetupSecrets } from "./config/bound-setup-secrets.js";
import { caBundleFile, cidrList, parseWorkerEnv } from "./config/worker-env.js";
import type { WorkerTuning } from "./config/worker-tuning.js";
import { appIdentity } from "./github/app-identity.js";
import { workerHealth } from "./health.js";
import { runAdmission } from "./jobs/admission.js";
import type { FixWorker } from "./jobs/options.js";
import { requeueAfterCancel } from "./jobs/requeue-after-cancel.js";
import { startFixWorker } from "./jobs/start.js";
import { createWorkerLogger, type Logger } from "./log.js";
import { meteredSandboxes } from "./metrics.js";
import { type OpsServer, startOpsServer } from "./ops-server.js";
import { endRemovedJob, writeAbandonedStatus } from "./run/end/abandoned-status.js";
import { pullMergeability } from "./run/keep-up/pull-mergeability.js";
import { probotInstallationAuth } from "./run/open/installation-auth.js";
import { writeJobStatus } from "./run/open/open-run.js";
import { reapCheckouts } from "./run/open/work-dirs.js";
import { leftCheckRuns } from "./run/publish/left-check-runs.js";
import { pendingPublishes } from "./run/publish/pending-publishes.js";
import { runJob } from "./run/run-job.js";
import type { RunParts, TrajectoryLink } from "./run/run-parts.js";
import { monthlySpend } from "./run/solve/monthly-spend.js";
import { storeTrajectories } from "./run/solve/trajectory-sink.js";
import type { RunJob } from "./run-end.js";

export type { FixJobProcessor, FixWorker, FixWorkerOptions } from "./jobs/options.js";
export { startFixWorker } from "./jobs/start.js";

type WorkerSettings = ReturnType<typeof parseWorkerEnv>;

export interface StartedWorker {
  readonly fixWorker: FixWorker;
  readonly logger: Logger;
  /** Its /healthz and /metrics server, when AGENT_FIX_WORKER_PORT is set. */
  readonly ops: OpsServer | undefined;
  /** Stops taking jobs, lets runs finish within the grace period, hands the rest back, releases all. */
  stop(): Promise<void>;
}

/** The worker configured from the environment, not yet bound to process signals (src/main.ts shares them). */
export async function startWorkerFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<StartedWorker> {
  const built = await createProcessorFromEnv(env);
  const fixWorker = await startFixWorker(built.workerOptions);
  const ops = built.ops ? await startOpsServer({ ...built.ops, logger: built.logger }) : undefined;
  return {
    fixWorker,
    logger: built.logger,
    ops,
    stop: async () => {
      const grace = Math.round(built.graceMs / 1000);
      built.logger.info(
        `finishing runs (grace ${grace} s), taking no new jobs; the rest go back to the queue`,
      );
      await fixWorker.shutdown(built.graceMs);
      await ops?.close();
      await built.close();
    },
  };
}

/** Builds every part from the environment, once per process; tests start the queue worker from it. */
export async function createProcessorFromEnv(env: NodeJS.ProcessEnv) {
  // 1. The environment (where things are) and the operator's YAML (how they behave).
  const settings = parseWorkerEnv(env);
  const logger = createWorkerLogger(settings.LOG_LEVEL);
  const operator = await loadConfig(settings.AGENT_FIX_CONFIG ? { files: [settings.AGENT_FIX_CONFIG] } : {});
  // 2. What a start must refuse before anything connects: a wrong S3 bucket, a secret bound by name only.
  const blobs = await trajectoryBlobsFromEnv(settings);
  const probot = githubApp(settings);
  const setupSecrets = await boundSetupSecrets(settings.AGENT_FIX_SETUP_SECRETS, probot);
  const auth = probotInstallationAuth(probot, logger);
  const identity = await appIdentity(probot, settings, logger);
  // 3. The sandbox provider: Docker on this host's engine or AGENT_FIX_DOCKER_HOSTS' (each one's runtime
  // checked), or the local one for development.
  const docker =
    settings.AGENT_FIX_SANDBOX === "docker"
      ? new DockerEnginePool(
          engineList(settings, env.DOCKER_HOST).map(({ docker, ...engine }) => ({
            ...engine,
            provider: dockerSandboxes(settings, operator.worker, docker),
          })),
          (message) => logger.warn(message),
          operator.worker.engineWatch,
        )
      : undefined;
  // Each engine answers and has the sandbox image, else the log says so with the fix and no run goes
  // to it while another engine can take it; each that answers has the runtime asked for, else no start.
  await docker?.checkEngines();
  const runtime = settings.AGENT_FIX_SANDBOX_RUNTIME;
  for (const engine of runtime ? (docker?.engines ?? []) : [])
    if (!engine.down) await checkSandboxRuntime(engine.provider.docker, runtime as string);
  const sandboxes: SandboxProvider = meteredSandboxes(
    docker ?? new LocalSandboxProvider({ warn: (message) => logger.warn(message) }),
  );
  // 4. Redis, the queue's producer side (follow-ups, re-queues) and the stores on it.
  const redis = await connectRedis(settings.AGENT_FIX_REDIS_URL, "worker", (message) => logger.warn(message));
  const names = { prefix: settings.AGENT_FIX_QUEUE_PREFIX, name: DEFAULT_QUEUE_NAME };
  const producer = createFixQueue(redis, { prefix: names.prefix });
  const untrackQueue = trackQueueDepth(producer.queue);
  const usage = runUsage(redis, names);
  const pullCosts = pullRequestCosts(redis, names);
  const trajectoryDir = resolve(settings.AGENT_FIX_TRAJECTORY_DIR);
  await mkdir(trajectoryDir, { recursive: true });
  const trajectories = createTrajectoryStore(redis, {
    prefix: settings.AGENT_FIX_QUEUE_PREFIX,
    retentionDays: settings.AGENT_FIX_TRAJECTORY_RETENTION_DAYS,
    maxBytes: settings.AGENT_FIX_TRAJECTORY_MAX_BYTES,
    ...(blobs ? { blobs } : {}),
  });
  // 5. What every run shares.
  const links = linkPolicy(githubWebUrl(settings), operator.github.linkHosts);
  const allowRepoReplay = settings.AGENT_FIX_ALLOW_REPLAY_MODELS === "true";
  const trajectoryLinks = trajectoryLinksOf(settings, trajectoryDir);
  const parts: RunParts = {
    auth,
    sandboxes,
    identity,
    links,
    trajectoryLinks,
    agent: {
      operator,
      modelOverride: settings.AGENT_FIX_MODEL,
      allowRepoReplay,
      trajectoryDir,
      trajectorySink: storeTrajectories(trajectories, logger),
      env,
      spendOf: monthlySpend(usage, logger, pullCosts),
    },
    configRules: {
      defaultMaxSteps: operator.agent.limits.maxSteps,
      policy: operator.repository,
      model: operator.model,
      modelOverride: settings.AGENT_FIX_MODEL,
      allowReplayModels: allowRepoReplay,
      // Probed once per image id: which of the operator's images meets the repository's declared versions.
      toolchains: sandboxes.toolchains,
    },
    setupSecrets,
    startRules: { label: settings.AGENT_FIX_LABEL, labelBots: settings.AGENT_FIX_LABEL_BOTS },
    pendingCancel: async (jobId) => {
      const request = await readCancelRequest({ ...names, redis }, jobId);
      return request ? { kind: "cancelled", by: request.by, reason: request.reason } : null;
    },
    afterCancel: requeueAfterCancel({ producer, label: settings.AGENT_FIX_LABEL, logger }),
    pendingPublishes: pendingPublishes(redis, names),
    leftCheckRuns: leftCheckRuns(redis, names),
    pullCosts,
    workRoot: settings.AGENT_FIX_WORK_DIR,
    intake: {
      workspaceBytes: parseSize(settings.AGENT_FIX_WORKSPACE_SIZE ?? DEFAULT_WORKSPACE_SIZE),
      workspaceFiles: settings.AGENT_FIX_WORKSPACE_MAX_FILES,
      changeFiles: settings.AGENT_FIX_CHANGE_MAX_FILES,
      changeBytes: parseSize(settings.AGENT_FIX_CHANGE_MAX_BYTES),
    },
    logger,
  };
  // 6. The admission: per-installation runs at once, budgets and daily runs; its notices on the status.
  const admission = runAdmission({
    redis,
    names,
    quotas: operator.quotas,
    usage,
    logger,
    notify: (job, notice) =>
      writeJobStatus(parts, job, (status) =>
        notice.kind === "waiting"
          ? status.progress("queued", { note: notice.text })
          : status.failed(notice.text),
      ),
    promote: async (jobId) => {
      const job = await producer.queue.getJob(jobId);
      return job
        ? job.promote().then(
            () => true,
            () => false,
          )
        : false;
    },
  });
  // 7. The queue worker, with the run as its processor; the ops server's settings.
  const reaperLog = logger.child({ component: "reaper" });
  const tuning = operator.worker;
  return {
    workerOptions: {
      redisUrl: settings.AGENT_FIX_REDIS_URL,
      prefix: settings.AGENT_FIX_QUEUE_PREFIX,
      queueName: DEFAULT_QUEUE_NAME,
      concurrency: settings.AGENT_FIX_CONCURRENCY,
      lockDurationMs: tuning.lockMs,
      ...(tuning.stalledIntervalMs === null ? {} : { stalledIntervalMs: tuning.stalledIntervalMs }),
      process: (job: Job<FixJobData>, signal: AbortSignal, finishing: () => void) =>
        runJob(runJobOf(job), signal, finishing, parts),
      onAbandoned: (
        job: FixJobData,
        abandonment: Parameters<typeof writeAbandonedStatus>[2],
        jobId: string,
      ) => writeAbandonedStatus(parts, job, abandonment, jobId),
      onRemoved: (jobId: string) => endRemovedJob(parts, jobId),
      admission,
      // The app's pull requests looked at after their base moved: a rebase round when they conflict.
      baseMoves: {
        whenConflicting: tuning.keepUp.whenConflicting,
        look: (move: BaseMove) => pullMergeability(parts, move),
        appLogin: identity.name,
      },
      // What workers that died left behind (sandboxes, the images they built, host checkouts), at start
      // and on a timer.
      reap: () => reapLeftovers(settings, docker, (message) => reaperLog.info(message)),
      reaperIntervalMs: tuning.reaperIntervalMs,
      logger,
    },
    graceMs: settings.AGENT_FIX_SHUTDOWN_GRACE_SECONDS * 1000,
    ops:
      settings.AGENT_FIX_WORKER_PORT === undefined
        ? undefined
        : {
            port: settings.AGENT_FIX_WORKER_PORT,
            host: settings.AGENT_FIX_WORKER_HOST,
            metricsToken: settings.AGENT_FIX_METRICS_TOKEN,
            health: workerHealth({
              docker: docker
                ? {
                    engines: docker.engines.map((e) => ({ name: e.name, engine: e.provider.docker })),
                    image: docker.engines[0]?.provider.image ?? "",
                  }
                : undefined,
              redis,
            }),
          },
    logger,
    close: async () => {
      untrackQueue();
      await producer
        .close()
        .catch((err: unknown) => logger.warn({ err }, "closing the producer queue failed"));
      redis.disconnect();
      blobs?.close();
      await docker?.close();
    },
  };
}

/** The job as the run sees it: plain values, no queue client. */
function runJobOf(job: Job<FixJobData>): RunJob {
  return {
    id: job.id ?? "",
    createdAt: job.timestamp,
    data: job.data,
    attempt: { number: job.attemptsMade + 1, of: job.opts.attempts ?? 1 },
  };
}

/** The GitHub App client: installation tokens, and writes spaced across the deployment through its Redis. */
function githubApp(settings: WorkerSettings) {
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

/**
 * The Docker sandbox provider the settings (where things are) and the operator's tuning (what is kept
 * warm) describe; AGENT_FIX_WORKER_TAG groups the workers sharing an engine (tests).
 */
function dockerSandboxes(
  settings: WorkerSettings,
  tuning: Pick<WorkerTuning, "keptEnvironments" | "standby">,
  docker: Docker,
): DockerSandboxProvider {
  const keptSize = tuning.keptEnvironments.size;
  const caBundle = caBundleFile(settings.AGENT_FIX_CA_BUNDLE, existsSync);
  const tag = settings.AGENT_FIX_WORKER_TAG;
  return new DockerSandboxProvider({
    docker,
    ...(caBundle ? { caBundle } : {}),
    ...(settings.AGENT_FIX_SANDBOX_IMAGE ? { image: settings.AGENT_FIX_SANDBOX_IMAGE } : {}),
    ...(tag ? { workerId: `${tag}/${defaultWorkerId()}` } : {}),
    ...(settings.AGENT_FIX_SANDBOX_RUNTIME ? { runtime: settings.AGENT_FIX_SANDBOX_RUNTIME } : {}),
    ...(settings.AGENT_FIX_WORKSPACE_SIZE ? { workspaceSize: settings.AGENT_FIX_WORKSPACE_SIZE } : {}),
    ...(keptSize === 0 || keptSize === "0"
      ? {}
      : { keptEnvironments: { name: settings.AGENT_FIX_KEPT_ENVIRONMENTS_NAME, maxSize: keptSize } }),
    standby: {
      max: tuning.standby.sandboxes,
      idleMs: tuning.standby.idleMinutes * 60_000,
      sharedImages: tuning.standby.sharedImages,
    },
    setupNetwork: {
      name: settings.AGENT_FIX_SETUP_NETWORK,
      allow: cidrList(settings.AGENT_FIX_SETUP_NETWORK_ALLOW),
      deny: cidrList(settings.AGENT_FIX_SETUP_NETWORK_DENY),
    },
  });
}

/**
 * AGENT_FIX_DOCKER_HOSTS' engines (refused at start when one is wrong), else DOCKER_HOST's, as the
 * docker CLI reads it. A DOCKER_HOST of ssh:// is read as AGENT_FIX_DOCKER_HOSTS reads it: dockerode
 * alone would accept whatever host key answered there, and would not watch a host that may vanish.
 */
function engineList(
  settings: WorkerSettings,
  dockerHost: string | undefined,
): { name: string; docker: Docker; remote: boolean; cli: string }[] {
  const sshHost = dockerHost?.startsWith("ssh://") ? dockerHost : undefined;
  // Otherwise the docker CLI reads DOCKER_HOST as dockerode does: plain `docker` reaches this one.
  if (!settings.AGENT_FIX_DOCKER_HOSTS && !sshHost)
    return [{ name: "local", docker: new Docker(), remote: false, cli: "docker" }];
  return dockerEngines({
    ...(settings.AGENT_FIX_DOCKER_HOSTS
      ? { hosts: settings.AGENT_FIX_DOCKER_HOSTS }
      : { hosts: sshHost as string, variable: "DOCKER_HOST" as const }),
    tlsDir: settings.AGENT_FIX_DOCKER_TLS_DIR,
    insecureTcp: settings.AGENT_FIX_DOCKER_INSECURE_TCP === "true",
    knownHosts: settings.AGENT_FIX_DOCKER_SSH_KNOWN_HOSTS,
  }).map(({ options, ...engine }) => ({ ...engine, docker: new Docker(options) }));
}

/**
 * What workers that died (SIGKILL, OOM, host reboot) left behind. Tagged workers (tests sharing an engine)
 * touch only their own group's sandboxes and leave the engine's images alone.
 */
function reapLeftovers(
  settings: WorkerSettings,
  docker: DockerEnginePool | undefined,
  log: (message: string) => void,
): Promise<unknown> {
  const tag = settings.AGENT_FIX_WORKER_TAG;
  const ownGroup = tag
    ? {
        maxAgeMs: Number.POSITIVE_INFINITY,
        isWorkerAlive: (id: string) =>
          !id.startsWith(`${tag}/`) || workerAliveOnThisHost(id.slice(tag.length + 1)),
      }
    : {};
  // Every engine's; one that does not answer is skipped until it does (the pool's ping).
  const engines = docker
    ? docker.ping().then(() => docker.engines.filter((e) => !e.down))
    : Promise.resolve([]);
  return Promise.all([
    engines.then((up) =>
      Promise.all(
        up.map((e) =>
          Promise.all([
            reapSandboxes({ docker: e.provider.docker, log, ...ownGroup }),
            tag ? [] : cleanWorkerImages({ docker: e.provider.docker, log }),
          ]),
        ),
      ),
    ),
    reapCheckouts({ ...(settings.AGENT_FIX_WORK_DIR ? { workRoot: settings.AGENT_FIX_WORK_DIR } : {}), log }),
  ]);
}

/**
 * With PUBLIC_URL the status and summary link a run's full trajectory, served (signed, expiring) by
 * src/server/trajectories.ts; only once the run has written one.
 */
function trajectoryLinksOf(settings: WorkerSettings, trajectoryDir: string) {
  return (run: string): TrajectoryLink =>
    settings.PUBLIC_URL && settings.WEBHOOK_SECRET
      ? {
          trajectoryUrl: trajectoryUrl(settings.PUBLIC_URL, settings.WEBHOOK_SECRET, `${run}.traj`, {
            ttlMs: settings.AGENT_FIX_TRAJECTORY_LINK_DAYS * 24 * 60 * 60 * 1000,
          }),
          trajectoryWritten: () => existsSync(join(trajectoryDir, `${run}.traj`)),
        }
      : {};
}

/** `npm run start:worker`: the worker alone, configured from the environment. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<FixWorker> {
  const started = await startWorkerFromEnv(env);
  exitOnSignals(() => started.stop(), { log: (message) => started.logger.info(message) });
  return started.fixWorker;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    // No logger yet (its level comes from the environment being refused): the process's last words.
    console.error(`[worker] cannot start: ${error instanceof Error ? error.message : String(error)}`);
    const hint = (error as { hint?: string }).hint;
    if (hint) console.error(`[worker] ${hint}`);
    process.exit(1);
  });
}
