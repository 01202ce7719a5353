/**
 * The status comment always ends final, also when no processor is left to
 * write it: a job whose worker died too often (failed by BullMQ as stalled), a job removed while its dead
 * worker held it, a job that failed before its processor could report. Each worker keeps a record of the
 * runs it holds (ids only, as in the job); whichever worker process is alive finalizes an abandoned one.
 */
import { UnrecoverableError } from "bullmq";
import {
  type FixJobData,
  parseFixJobData,
  type QueueNames,
  runRecordKey,
} from "../../src/shared/queue/index.js";
import type { Abandonment } from "../run-end.js";

/**
 * A job failed for good (BullMQ does not retry it), and whether its status comment already says so: when
 * not, the worker's 'failed' listener finalizes it like an abandoned job's.
 */
export class FailedForGood extends UnrecoverableError {
  constructor(
    message: string,
    readonly statusWritten: boolean,
  ) {
    super(message);
    this.name = "FailedForGood";
  }
}

/**
 * Writes the final status of an abandoned job (mints the installation token on the host), and ends the
 * check run its last attempt may have left in progress (by `jobId`).
 */
export type FinalizeAbandoned = (job: FixJobData, abandonment: Abandonment, jobId: string) => Promise<void>;

/** BullMQ's reason for a job failed because it stalled more than `maxStalledCount` times. */
export const STALLED_FAILURE = "job stalled more than allowable limit";

/** The Redis commands the run records need. */
interface RunRecordStore {
  set(key: string, value: string, mode: "EX", seconds: number): Promise<unknown>;
  del(key: string): Promise<unknown>;
  getdel(key: string): Promise<string | null>;
}

const RECORD_TTL_S = 30 * 24 * 60 * 60;

/** The runs a worker holds, kept in Redis so another process can finish what a dead one left. */
export function runRecords(redis: RunRecordStore, names: QueueNames) {
  return {
    begin: (jobId: string, data: FixJobData) =>
      redis.set(runRecordKey(names, jobId), JSON.stringify(data), "EX", RECORD_TTL_S),
    end: (jobId: string) => redis.del(runRecordKey(names, jobId)),
    /** The record of a run nobody holds any more, taken once (several processes hear the same event). */
    async claim(jobId: string): Promise<FixJobData | null> {
      const raw = await redis.getdel(runRecordKey(names, jobId));
      if (!raw) return null;
      try {
        return parseFixJobData(JSON.parse(raw));
      } catch {
        return null; // a record that does not parse names no job to finalize
      }
    },
  };
}
