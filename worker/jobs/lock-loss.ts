import type { Worker } from "bullmq";
import type { FixJobData } from "../../src/shared/queue/index.js";
import type { Logger } from "../log.js";
import { encodeAbortReason } from "./abort-reason.js";

const LOCK_LOST_REASON = encodeAbortReason({
  kind: "lock_lost",
  by: "the queue",
  reason: "the worker could not renew its lock on the job",
});

/**
 * A lock that could not be renewed (Redis away longer than the lock lives) means the stall check moves
 * or has moved the job back to the queue: the run here stops, so the job is not run twice at once.
 */
export function stopRunsOnLostLocks(worker: Worker<FixJobData>, logger: Logger) {
  worker.on("lockRenewalFailed", (jobIds) => {
    for (const jobId of jobIds) {
      if (worker.cancelJob(jobId, LOCK_LOST_REASON))
        logger.warn({ jobId }, "lock on the job lost: run stopped, the queue gives the job out again");
    }
  });
}
