import { QueueEvents, type Worker } from "bullmq";
import { startFollowUp } from "../../src/shared/queue/feedback.js";
import { type connectRedis, createFixQueue, type FixJobData } from "../../src/shared/queue/index.js";
import type { Logger } from "../log.js";
import type { Abandonment } from "../run-end.js";
import { conflictingOf, startKeepUpRound } from "./keep-up-round.js";
import type { FixWorkerOptions } from "./options.js";
import { FailedForGood, type runRecords, STALLED_FAILURE } from "./run-records.js";

type RunRecords = ReturnType<typeof runRecords>;
type RedisConnection = Awaited<ReturnType<typeof connectRedis>>;

/**
 * How jobs end, heard from this worker and from the queue's events: a follow-up review round for
 * feedback that waited (or a rebase round for a pull request found conflicting), and the final status of a job that ended with no processor to write it.
 */
export function watchJobEnds(
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
    await options.onAbandoned(job, abandonment, jobId);
  };
  const logFailure = (jobId: string) => (err: unknown) =>
    logger.error({ jobId, err }, "final status of the job not written");
  // Review feedback that came in while the job was queued or running gets one follow-up round now.
  const followUps = createFixQueue(queue.connection, { prefix, name });
  // A pull request found conflicting gets a rebase round, unless a review round just took its turn.
  const followUp = (data: FixJobData, conflicting?: number) =>
    void startFollowUp(followUps, data)
      .then(async (started) => {
        if (started?.status === "queued")
          return logger.info({ jobId: started.jobId }, "follow-up review run queued");
        if (conflicting === undefined) return;
        const keepUp = await startKeepUpRound(followUps, data, conflicting);
        if (keepUp.status === "queued") logger.info({ jobId: keepUp.jobId }, "rebase round queued by itself");
      })
      .catch((err: unknown) => logger.error({ err }, "follow-up round not started"));
  worker.on("error", (err) => logger.error({ err }, "worker error"));
  worker.on("failed", (job, error) => {
    logger.warn({ jobId: job?.id }, `job failed: ${error.message}`);
    // Failed for good (no retry follows) without the processor having left the status final.
    if (job?.finishedOn !== undefined) followUp(job.data);
    if (!job?.id || job.finishedOn === undefined) return;
    if (error instanceof FailedForGood && error.statusWritten) return;
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
    // Removed while it waited (a cancel, an operator): an attempt before its worker died may have left
    // work on GitHub in progress (its check run), which nothing else would end.
    else if (prev !== "completed" && prev !== "failed")
      void options
        .onRemoved?.(jobId)
        .catch((err: unknown) =>
          logger.error({ jobId, err }, "what the removed job left in progress was not ended"),
        );
  });
  worker.on("completed", (job) => {
    logger.info({ jobId: job.id }, "job completed");
    followUp(job.data, conflictingOf(job.returnvalue));
  });
  return { followUps, events };
}
