/**
 * Worker process entry: a BullMQ Worker over the fix queue. Takes jobs with a configurable
 * concurrency, renews its locks through long runs (a dead worker's job is picked up by another after
 * the lock lapses), hears cancels from any webhook process, reaps orphaned sandboxes, and on SIGTERM
 * stops taking jobs, lets runs finish within a grace period, then hands the rest back to the queue
 * for another worker (a rolling deploy loses no run; their status comments say so). A job that ends with no processor left to report (its worker died too
 * often, or it was removed while a dead worker held it) gets its final status from whichever worker
 * process is alive.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { type Job, QueueEvents, WaitingError, Worker } from "bullmq";
import { exitOnSignals } from "../src/process-signals.js";
import { startFollowUp } from "../src/queue/feedback.js";
import {
  connectRedis,
  createFixQueue,
  DEFAULT_QUEUE_NAME,
  DEFAULT_QUEUE_PREFIX,
  type FixJobData,
  subscribeToCancels,
} from "../src/queue/index.js";
import { cancelChannel } from "../src/queue/keys.js";
import { persistenceWarning, redisPersistence } from "../src/queue/persistence.js";
import type { RunAdmission } from "./fairness/admission.js";
import { admitOrPark } from "./fairness/gate.js";
import { createWorkerLogger, type Logger } from "./log.js";
import { observeRun } from "./metrics.js";
import { type OpsServer, startOpsServer } from "./ops-server.js";
import { decodeAbortReason, encodeAbortReason } from "./pipeline/cancel.js";
import {
  type Abandonment,
  type FinalizeAbandoned,
  isStatusFinal,
  runRecords,
  STALLED_FAILURE,
} from "./pipeline/final-status.js";

/** `finishing`: the run's outcome is reported and only cleanup is left (a shutdown waits for it). */
export type FixJobProcessor = (
  job: Job<FixJobData>,
  signal: AbortSignal,
  finishing: () => void,
) => Promise<unknown>;

export interface FixWorkerOptions {
  redisUrl: string;
  queueName?: string;
  prefix?: string;
  /** Jobs run at once by this process; each holds one sandbox. */
  concurrency?: number;
  /** How long a lock lives without renewal (renewed every half): the time before a dead worker's job moves on. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Times a job may lose its worker and start again before it fails for good (default 1: the second death fails it). */
  maxStalledCount?: number;
  process: FixJobProcessor;
  /** Leaves the status comment of a job that ended with no processor to report final. */
  onAbandoned?: FinalizeAbandoned;
  /** Removes sandboxes left behind by dead workers; run at start and every `reaperIntervalMs`. */
  reap?: () => Promise<unknown>;
  reaperIntervalMs?: number;
  /** Default: a worker logger of its own (the composition root passes the process's). */
  logger?: Logger;
  /** Per-installation runs at once, budgets and daily runs (worker/fairness/); none: every job runs. */
  admission?: RunAdmission;
}

export interface FixWorker {
  readonly worker: Worker<FixJobData>;
  /** Jobs this process is running now. */
  activeJobs(): string[];
  /** Stop taking jobs, wait up to `graceMs` for the running ones, hand what is left back to the queue, close. */
  shutdown(graceMs: number): Promise<void>;
}

export async function startFixWorker(options: FixWorkerOptions): Promise<FixWorker> {
  const logger = options.logger ?? createWorkerLogger();
  const name = options.queueName ?? DEFAULT_QUEUE_NAME;
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  const redisError = (message: string) => logger.warn(message);
  const connection = await connectRedis(options.redisUrl, "worker", redisError);
  const persistence = persistenceWarning(await redisPersistence(connection));
  if (persistence) logger.warn(persistence);
  const subscriber = await connectRedis(options.redisUrl, "subscriber", redisError);
  const eventsConnection = await connectRedis(options.redisUrl, "subscriber", redisError);
  // `finishing`: runs whose outcome is reported: nothing left to hand back, a shutdown lets them end.
  const jobs: HeldJobs = { running: new Map(), finishing: new Set() };
  const records = runRecords(connection, { prefix, name });
  const maxStalledCount = options.maxStalledCount ?? 1;
  const reaper = await startReaper(options, logger);
  const lockDuration = options.lockDurationMs ?? 60_000;
  const worker = new Worker<FixJobData>(name, jobProcessor(options, records, jobs, logger), {
    connection: connection as never,
    prefix,
    concurrency: options.concurrency ?? 1,
    lockDuration,
    stalledInterval: options.stalledIntervalMs ?? Math.max(1_000, Math.floor(lockDuration / 2)),
    // A job whose worker keeps dying (a crash it causes, a memory limit) fails rather than looping forever.
    maxStalledCount,
  });
  stopRunsOnLostLocks(worker, logger);
  const queue = { name, prefix, connection, eventsConnection };
  const { followUps, events } = watchJobEnds(worker, queue, records, options, logger);
  const unsubscribe = await subscribeToCancels(subscriber, cancelChannel({ prefix, name }), (request) => {
    if (
      worker.cancelJob(
        request.jobId,
        encodeAbortReason({ kind: "cancelled", by: request.by, reason: request.reason }),
      )
    ) {
      logger.info({ jobId: request.jobId }, `cancelled (${request.reason}, by ${request.by})`);
    }
  });
  await Promise.all([worker.waitUntilReady(), events.waitUntilReady()]);
  logger.info(`taking jobs from ${prefix}:${name} (concurrency ${worker.concurrency})`);
  const close = async () => {
    await worker.close();
    const closeFailed = (what: string) => (err: unknown) => logger.warn({ err }, `closing ${what} failed`);
    await followUps.queue.close().catch(closeFailed("the follow-up queue"));
    await events.close().catch(closeFailed("the queue events"));
    eventsConnection.disconnect();
    await unsubscribe().catch(closeFailed("the cancel subscription"));
    subscriber.disconnect();
    connection.disconnect();
  };
  const shutdown = shutdownOnce(worker, jobs, reaper, close, logger);
  return { worker, activeJobs: () => [...jobs.running.keys()], shutdown };
}

/** The jobs this process holds: each one's run, and those whose outcome is reported. */
interface HeldJobs {
  running: Map<string, Promise<unknown>>;
  finishing: Set<string>;
}

type RunRecords = ReturnType<typeof runRecords>;
type RedisConnection = Awaited<ReturnType<typeof connectRedis>>;

/** Reaps once now, then on a timer (undefined without a reaper). */
async function startReaper(options: FixWorkerOptions, logger: Logger) {
  const reapFailed = (err: unknown) => logger.error({ err }, "reaper failed");
  if (options.reap) await options.reap().catch(reapFailed);
  const reaper = options.reap
    ? setInterval(() => void options.reap?.().catch(reapFailed), options.reaperIntervalMs ?? 5 * 60_000)
    : undefined;
  reaper?.unref();
  return reaper;
}

/** The BullMQ processor: runs `options.process` with the job's run record, and hands back on shutdown. */
function jobProcessor(options: FixWorkerOptions, records: RunRecords, jobs: HeldJobs, logger: Logger) {
  // Three parameters: BullMQ passes the AbortSignal only to processors that declare it.
  return async (job: Job<FixJobData>, token: string | undefined, signal?: AbortSignal) => {
    const id = job.id ?? "";
    const jobSignal = signal ?? new AbortController().signal;
    const release = await admitOrPark(options.admission, job, token, logger);
    const settled = (async () => {
      await records.begin(id, job.data);
      try {
        const result = await observeRun(job, jobSignal, () =>
          options.process(job, jobSignal, () => jobs.finishing.add(id)),
        );
        await records.end(id);
        return result;
      } catch (error) {
        // Not ours any more: the run record and the job belong to whichever run holds it now.
        if (abortKind(jobSignal) === "lock_lost") throw new WaitingError();
        if (handingBack(jobSignal)) {
          await records.end(id);
          await handBack(job, token, logger);
          throw new WaitingError();
        }
        // Kept when the status is not final yet: a retry follows, or the 'failed' listener finalizes it.
        if (isStatusFinal(error)) await records.end(id);
        throw error;
      }
    })();
    jobs.running.set(id, settled);
    try {
      return await settled;
    } finally {
      jobs.running.delete(id);
      jobs.finishing.delete(id);
      await release();
    }
  };
}

/**
 * How jobs end, heard from this worker and from the queue's events: a follow-up review round for
 * feedback that waited, and the final status of a job that ended with no processor to write it.
 */
function watchJobEnds(
  worker: Worker<FixJobData>,
  queue: { name: string; prefix: string; connection: RedisConnection; eventsConnection: RedisConnection },
  records: RunRecords,
  options: FixWorkerOptions,
  logger: Logger,
) {
  const { name, prefix } = queue;
  const maxStalledCount = options.maxStalledCount ?? 1;
  // Several processes may hear of the same job; the run record is taken once.
  const abandon = async (jobId: string, abandonment: Abandonment, data?: FixJobData) => {
    const record = await records.claim(jobId);
    const job = data ?? record;
    if (!job || !options.onAbandoned) return;
    logger.info({ jobId }, `job ended with nobody to report it (${abandonment.kind}): finalizing its status`);
    await options.onAbandoned(job, abandonment);
  };
  const logFailure = (jobId: string) => (err: unknown) =>
    logger.error({ jobId, err }, "final status of the job not written");
  // Review feedback that came in while the job was queued or running gets one follow-up round now.
  const followUps = createFixQueue(queue.connection, { prefix, name });
  const followUp = (data: FixJobData) =>
    void startFollowUp(followUps, data)
      .then((started) => {
        if (started?.status === "queued")
          logger.info({ jobId: started.jobId }, "follow-up review run queued");
      })
      .catch((err: unknown) => logger.error({ err }, "follow-up review run not started"));
  worker.on("error", (err) => logger.error({ err }, "worker error"));
  worker.on("failed", (job, error) => {
    logger.warn({ jobId: job?.id }, `job failed: ${error.message}`);
    // Failed for good (no retry follows) without the processor having left the status final.
    if (job?.finishedOn !== undefined) followUp(job.data);
    if (!job?.id || job.finishedOn === undefined || isStatusFinal(error)) return;
    const abandonment: Abandonment =
      error.message === STALLED_FAILURE
        ? { kind: "stalled", deaths: maxStalledCount + 1 }
        : { kind: "failed", message: error.message };
    void abandon(job.id, abandonment, job.data).catch(logFailure(job.id));
  });
  // A job removed while active had no live worker (BullMQ refuses to remove a locked job).
  const events = new QueueEvents(name, { connection: queue.eventsConnection as never, prefix });
  events.on("error", (err) => logger.error({ err }, "queue events error"));
  events.on("removed", ({ jobId, prev }) => {
    if (prev === "active") void abandon(jobId, { kind: "removed" }).catch(logFailure(jobId));
  });
  worker.on("completed", (job) => {
    logger.info({ jobId: job.id }, "job completed");
    followUp(job.data);
  });
  return { followUps, events };
}

/** Stop taking jobs, wait up to `graceMs`, hand back what is unfinished, then `close`; once. */
function shutdownOnce(
  worker: Worker<FixJobData>,
  { running, finishing }: HeldJobs,
  reaper: ReturnType<typeof setInterval> | undefined,
  close: () => Promise<void>,
  logger: Logger,
) {
  let closing: Promise<void> | undefined;
  return (graceMs: number): Promise<void> => {
    closing ??= (async () => {
      if (reaper) clearInterval(reaper);
      await worker.pause(true);
      const all = Promise.allSettled([...running.values()]);
      const timedOut = await Promise.race([all.then(() => false), sleep(graceMs, true, { ref: false })]);
      const unfinished = [...running.keys()].filter((id) => !finishing.has(id));
      if (timedOut && unfinished.length > 0) {
        logger.info(`grace period over: handing ${unfinished.length} run(s) back to the queue`);
        for (const id of unfinished) worker.cancelJob(id, SHUTDOWN_REASON);
      }
      await Promise.allSettled([...running.values()]);
      await close();
    })();
    return closing;
  };
}

const SHUTDOWN_REASON = encodeAbortReason({
  kind: "shutdown",
  by: "the worker shutting down",
  reason: "shutdown",
});

/** Whether the run was stopped because this worker is shutting down (not cancelled by a person). */
function handingBack(signal: AbortSignal): boolean {
  return abortKind(signal) === "shutdown";
}

function abortKind(signal: AbortSignal) {
  return signal.aborted ? decodeAbortReason(signal.reason).kind : undefined;
}

const LOCK_LOST_REASON = encodeAbortReason({
  kind: "lock_lost",
  by: "the queue",
  reason: "the worker could not renew its lock on the job",
});

/**
 * A lock that could not be renewed (Redis away longer than the lock lives) means the stall check moves
 * or has moved the job back to the queue: the run here stops, so the job is not run twice at once.
 */
function stopRunsOnLostLocks(worker: Worker<FixJobData>, logger: Logger) {
  worker.on("lockRenewalFailed", (jobIds) => {
    for (const jobId of jobIds) {
      if (worker.cancelJob(jobId, LOCK_LOST_REASON))
        logger.warn({ jobId }, "lock on the job lost: run stopped, the queue gives the job out again");
    }
  });
}

/**
 * Puts a job this worker holds back in the waiting list (its lock token proves it still holds it), for
 * another worker; attempts are not counted. Should Redis refuse, the job is left to stall: once its
 * lock lapses another worker's stall check moves it back to waiting all the same.
 */
async function handBack(job: Job<FixJobData>, token: string | undefined, logger: Logger) {
  try {
    await job.updateData({ ...job.data, handoffs: (job.data.handoffs ?? 0) + 1 });
    await job.moveToWait(token);
    logger.info({ jobId: job.id }, "job handed back to the queue for another worker");
  } catch (err) {
    logger.warn({ jobId: job.id, err }, "job not handed back: it moves on once its lock lapses");
  }
}

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
  const { createProcessorFromEnv } = await import("./processor.js");
  const built = await createProcessorFromEnv(env);
  const fixWorker = await startFixWorker({ ...built.workerOptions, logger: built.logger });
  const ops = built.ops ? await startOpsServer({ ...built.ops, logger: built.logger }) : undefined;
  return {
    fixWorker,
    logger: built.logger,
    ops,
    stop: async () => {
      built.logger.info(
        `finishing runs (grace ${Math.round(built.graceMs / 1000)} s), taking no new jobs; the rest go back to the queue`,
      );
      await fixWorker.shutdown(built.graceMs);
      await ops?.close();
      await built.close();
    },
  };
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
