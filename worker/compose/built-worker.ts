/** What the worker's composition root (worker/processor.ts) hands to worker/index.ts. */
import type { Job } from "bullmq";
import type { FixJobData } from "../../src/queue/index.js";
import type { parseWorkerEnv } from "../config/worker-env.js";
import type { fairnessParts } from "../fairness/wiring.js";
import type { HealthReport } from "../health.js";
import type { Logger } from "../log.js";
import type { FinalizeAbandoned } from "../pipeline/final-status.js";
import type { JobResult } from "../pipeline/fix-job.js";

/** The worker's settings, parsed and checked from its environment. */
export type WorkerSettings = ReturnType<typeof parseWorkerEnv>;

export interface BuiltWorker {
  /** Options for startFixWorker (worker/fix-worker/start.ts). */
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
