import { type Job, WaitingError } from "bullmq";
import type { FixJobData } from "../../src/queue/index.js";
import { admitOrPark } from "../fairness/gate.js";
import type { Logger } from "../log.js";
import { observeRun } from "../metrics.js";
import { decodeAbortReason } from "../pipeline/cancel.js";
import { isStatusFinal, type runRecords } from "../pipeline/final-status.js";
import type { FixWorkerOptions, HeldJobs } from "./options.js";

type RunRecords = ReturnType<typeof runRecords>;

/** The BullMQ processor: runs `options.process` with the job's run record, and hands back on shutdown. */
export function jobProcessor(options: FixWorkerOptions, records: RunRecords, jobs: HeldJobs, logger: Logger) {
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

/** Whether the run was stopped because this worker is shutting down (not cancelled by a person). */
function handingBack(signal: AbortSignal): boolean {
  return abortKind(signal) === "shutdown";
}

function abortKind(signal: AbortSignal) {
  return signal.aborted ? decodeAbortReason(signal.reason).kind : undefined;
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
