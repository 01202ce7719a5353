import { Worker } from "bullmq";
import {
  connectRedis,
  DEFAULT_QUEUE_NAME,
  DEFAULT_QUEUE_PREFIX,
  type FixJobData,
  subscribeToCancels,
} from "../../src/shared/queue/index.js";
import { cancelChannel } from "../../src/shared/queue/keys.js";
import { persistenceWarning, redisPersistence } from "../../src/shared/queue/persistence.js";
import { createWorkerLogger, type Logger } from "../log.js";
import { encodeAbortReason } from "./abort-reason.js";
import { startBaseMoveWorker } from "./base-moves.js";
import { watchJobEnds } from "./job-ends.js";
import { jobProcessor } from "./job-processor.js";
import { stopRunsOnLostLocks } from "./lock-loss.js";
import type { FixWorker, FixWorkerOptions, HeldJobs } from "./options.js";
import { runRecords } from "./run-records.js";
import { shutdownOnce } from "./shutdown.js";

/** Takes jobs from the fix queue until shut down: locks, cancels, reaper, job ends, handback. */
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
  const baseMoveConnection = options.baseMoves
    ? await connectRedis(options.redisUrl, "worker", redisError)
    : undefined;
  const baseMoves =
    options.baseMoves && baseMoveConnection
      ? startBaseMoveWorker(baseMoveConnection, { prefix, name }, followUps, options.baseMoves, logger)
      : undefined;
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
  await Promise.all([worker.waitUntilReady(), events.waitUntilReady(), baseMoves?.waitUntilReady()]);
  logger.info(`taking jobs from ${prefix}:${name} (concurrency ${worker.concurrency})`);
  const close = async () => {
    await worker.close();
    await baseMoves?.close();
    baseMoveConnection?.disconnect();
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
