/**
 * Composition root of the worker: builds the concrete parts from the environment (GitHub App
 * client, sandbox provider, queue, model and agent wiring) once per process, and hands them to the
 * per-job flow of pipeline/fix-job.ts, which runs the pipeline and maps errors to retry or not.
 * The one place in worker/ (beside index.ts and cli.ts) where classes are constructed; the parts are
 * made by worker/compose/ (probot, docker sandboxes, trajectory links, processor deps, worker options).
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { checkSandboxRuntime } from "../sandbox/docker-runtime.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import type { SandboxProvider } from "../src/contracts.js";
import { trackQueueDepth } from "../src/metrics/endpoint.js";
import { connectRedis, createFixQueue, DEFAULT_QUEUE_NAME } from "../src/queue/index.js";
import { trajectoryBlobsFromEnv } from "../src/trajectory-s3.js";
import type { BuiltWorker } from "./compose/built-worker.js";
import { dockerSandboxes } from "./compose/docker-sandboxes.js";
import { probotFromSettings } from "./compose/probot.js";
import { processorDeps } from "./compose/processor-deps.js";
import { boundSetupSecrets } from "./compose/setup-secrets.js";
import { statusOf } from "./compose/trajectory-links.js";
import { opsSettings, workerOptionsFor } from "./compose/worker-options.js";
import { parseWorkerEnv } from "./config/worker-env.js";
import { fairnessParts } from "./fairness/wiring.js";
import { createWorkerLogger } from "./log.js";
import { meteredSandboxes } from "./metrics.js";
import { loadOperatorConfig } from "./pipeline/agent-runner.js";
import { appIdentity, probotInstallationAuth } from "./pipeline/auth.js";

/** Builds the concrete parts from the environment: the one place the worker's classes are made. */
export async function createProcessorFromEnv(env: NodeJS.ProcessEnv): Promise<BuiltWorker> {
  const settings = parseWorkerEnv(env);
  const logger = createWorkerLogger(settings.LOG_LEVEL);
  const operator = await loadOperatorConfig(settings.AGENT_FIX_CONFIG);
  // First: a wrong S3 key or bucket stops the start with what to fix.
  const blobs = await trajectoryBlobsFromEnv(settings);
  const probot = probotFromSettings(settings);
  // Before anything else connects: an entry bound by name only stops the start with the ids to add.
  const secrets = await boundSetupSecrets(settings.AGENT_FIX_SETUP_SECRETS, probot);
  const auth = probotInstallationAuth(probot, logger);
  const identity = await appIdentity(probot, settings, logger);
  const tag = settings.AGENT_FIX_WORKER_TAG;
  const dockerProvider =
    settings.AGENT_FIX_SANDBOX === "docker" ? dockerSandboxes(settings, operator.worker, tag) : undefined;
  // A runtime the engine lacks stops the start (every run's first container would fail on it).
  if (dockerProvider && settings.AGENT_FIX_SANDBOX_RUNTIME)
    await checkSandboxRuntime(dockerProvider.docker, settings.AGENT_FIX_SANDBOX_RUNTIME);
  const sandboxes: SandboxProvider = meteredSandboxes(
    dockerProvider ?? new LocalSandboxProvider({ warn: (message) => logger.warn(message) }),
  );
  const redis = await connectRedis(settings.AGENT_FIX_REDIS_URL, "worker", (message) => logger.warn(message));
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
      ...workerOptionsFor(settings, operator.worker, deps, dockerProvider, tag, logger),
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
      await dockerProvider?.close();
    },
  };
}
