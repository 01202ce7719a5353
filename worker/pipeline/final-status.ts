/**
 * The status comment always ends final (step 12 of docs/architecture.md), also when no processor is left to
 * write it: a job whose worker died too often (failed by BullMQ as stalled), a job removed while its dead
 * worker held it, a job that failed before its processor could report. Each worker keeps a record of the
 * runs it holds (ids only, as in the job); whichever worker process is alive finalizes an abandoned one.
 */
import { type FixJobData, parseFixJobData, type QueueNames, runRecordKey } from "../../src/queue/index.js";

/** How a job ended without its processor leaving the status final. */
export type Abandonment =
  | { kind: "stalled"; deaths: number }
  | { kind: "removed" }
  | { kind: "failed"; message: string };

/** Writes the final status of an abandoned job (mints the installation token on the host). */
export type FinalizeAbandoned = (job: FixJobData, abandonment: Abandonment) => Promise<void>;

const statusFinal = new WeakSet<object>();

/** Marks an error thrown by a processor that has already left the status comment final. */
export function markStatusFinal<E extends Error>(error: E): E {
  statusFinal.add(error);
  return error;
}

export function isStatusFinal(error: unknown): boolean {
  return typeof error === "object" && error !== null && statusFinal.has(error);
}

/** BullMQ's reason for a job failed because it stalled more than `maxStalledCount` times. */
export const STALLED_FAILURE = "job stalled more than allowable limit";

/** The reason shown on the issue, in words a maintainer can act on. */
export function abandonedReason(abandonment: Abandonment): string {
  const retry = "Add the label again (or comment `/agent-fix`) to start a new run.";
  switch (abandonment.kind) {
    case "stalled":
      return (
        `The worker running this stopped without finishing ${abandonment.deaths} times (killed, out of ` +
        "memory, or its host went down), so the run was given up. Check the worker's logs and memory " +
        `limit. ${retry}`
      );
    case "removed":
      return (
        "The run was removed from the queue while its worker was gone (by an operator or a queue " +
        `clean-up), so nothing would finish it. ${retry}`
      );
    case "failed":
      return `The run stopped before it could report its outcome: ${abandonment.message}. Check the worker's logs. ${retry}`;
  }
}

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
