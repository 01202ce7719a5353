import type { DockerSandboxProvider } from "../../sandbox/docker.js";
import { cleanWorkerImages } from "../../sandbox/image-cleanup.js";
import { DEFAULT_QUEUE_NAME } from "../../src/queue/index.js";
import type { WorkerTuning } from "../config/worker-tuning.js";
import { workerHealth } from "../health.js";
import type { Logger } from "../log.js";
import { reapCheckouts } from "../pipeline/checkout-dirs.js";
import type { LoadedRepoConfig } from "../pipeline/config.js";
import { createFixProcessor, finalizeAbandonedWith, type ProcessorDeps } from "../pipeline/fix-job.js";
import type { BuiltWorker, WorkerSettings } from "./built-worker.js";
import { reapDockerSandboxes } from "./docker-sandboxes.js";

/** The options of startFixWorker, but the admission (made with the fairness parts). */
export function workerOptionsFor(
  settings: WorkerSettings,
  tuning: Pick<WorkerTuning, "lockMs" | "stalledIntervalMs" | "reaperIntervalMs">,
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
    lockDurationMs: tuning.lockMs,
    ...(tuning.stalledIntervalMs === null ? {} : { stalledIntervalMs: tuning.stalledIntervalMs }),
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
    reaperIntervalMs: tuning.reaperIntervalMs,
  };
}

/** The worker's /healthz and /metrics server, when AGENT_FIX_WORKER_PORT is set. */
export function opsSettings(
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
