import { type Job, WaitingError } from "bullmq";
import type { CancelReason } from "../../src/shared/errors.js";
import type { FixJobData } from "../../src/shared/queue/index.js";
import type { Logger } from "../log.js";
import type { RunEnd } from "../run-end.js";
import { decodeAbortReason } from "./abort-reason.js";
import { admitOrPark } from "./admission-gate.js";
import type { FixWorkerOptions, HeldJobs } from "./options.js";
import { observeRun } from "./run-metrics.js";
import { FailedForGood, type runRecords } from "./run-records.js";

type RunRecords = ReturnType<typeof runRecords>;

/**
 * The BullMQ processor: admits the job, runs `options.process` with the job's run record, and does
 * what the run's end asks of the queue (complete, retry, fail for good, or hand the job back).
 */
export function jobProcessor(options: FixWorkerOptions, records: RunRecords, jobs: HeldJobs, logger: Logger) {
  // Three parameters: BullMQ passes the AbortSignal only to processors that declare it.
  return async (job: Job<FixJobData>, token: string | undefined, signal?: AbortSignal) => {
    const id = job.id ?? "";
    const runSignal = decodedSignal(signal);
    const release = await admitOrPark(options.admission, job, token, logger);
    const settled = (async () => {
      await records.begin(id, job.data);
      const observed = observeRun(job);
      const end = await options
        .process(job, runSignal, () => jobs.finishing.add(id))
        .catch((error: unknown) => thrownEnd(error, runSignal))
        .catch((error: unknown) => {
          observed.ended(null);
          throw error;
        });
      observed.ended(end);
      return settle(end, { job, token, records, logger });
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

/** The run's signal: aborted when BullMQ's is, with the CancelReason the worker encoded (abort-reason.ts). */
function decodedSignal(signal: AbortSignal | undefined): AbortSignal {
  const decoded = new AbortController();
  if (!signal) return decoded.signal;
  const abort = () => decoded.abort(decodeAbortReason(signal.reason));
  if (signal.aborted) abort();
  else signal.addEventListener("abort", abort, { once: true });
  return decoded.signal;
}

/**
 * A processor that throws (a test's, or a run stopped from outside) leaves the job to BullMQ, but when
 * this worker stopped it: the job goes back to the queue then. Its record stays for the 'failed' listener.
 */
function thrownEnd(error: unknown, signal: AbortSignal): RunEnd {
  const kind = signal.aborted ? (signal.reason as CancelReason).kind : undefined;
  if (kind === "lock_lost") return { kind: "lock_lost" };
  if (kind === "shutdown") return { kind: "handed_back" };
  throw error;
}

interface Held {
  job: Job<FixJobData>;
  token: string | undefined;
  records: RunRecords;
  logger: Logger;
}

/** What BullMQ is to see of the run's end: a return value, or the error that moves the job where it goes. */
async function settle(end: RunEnd, { job, token, records, logger }: Held): Promise<unknown> {
  const id = job.id ?? "";
  switch (end.kind) {
    case "completed":
      await records.end(id);
      return end.result;
    case "retry":
      // The record stays: a retry follows (or, on the last attempt, the 'failed' listener finalizes).
      throw end.error;
    case "cancelled":
    case "failed": {
      // Kept when the status is not final yet: the 'failed' listener finalizes it.
      if (end.statusWritten) await records.end(id);
      const message = end.kind === "cancelled" ? `cancelled by ${end.by}` : end.message;
      throw Object.assign(new FailedForGood(message, end.statusWritten), {
        cause: end.kind === "failed" ? end.cause : undefined,
      });
    }
    case "handed_back":
      await records.end(id);
      await handBack(job, token, logger);
      throw new WaitingError();
    case "lock_lost":
      // Not ours any more: the run record and the job belong to whichever run holds it now.
      throw new WaitingError();
  }
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
