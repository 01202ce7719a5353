/**
 * The admission as BullMQ's processor applies it (job-processor.ts): an admitted job runs and gives its
 * slot back when it ends; a job over its installation's runs at once is parked (delayed, woken by the
 * next release); a refused one fails for good with its status comment already saying why.
 */
import { DelayedError, type Job } from "bullmq";
import type { FixJobData } from "../../src/shared/queue/index.js";
import type { Logger } from "../log.js";
import type { RunAdmission } from "./admission.js";
import { FailedForGood } from "./run-records.js";

/** Returns the release to call when the run ends; throws BullMQ's DelayedError when parked. */
export async function admitOrPark(
  admission: RunAdmission | undefined,
  job: Job<FixJobData>,
  token: string | undefined,
  logger: Logger,
): Promise<() => Promise<void>> {
  if (!admission) return async () => {};
  const result = await admission.admit(job);
  switch (result.kind) {
    case "admitted":
      return () =>
        result.release().catch((err: unknown) => {
          // Not given back: the lease lapses by itself (quotas.leaseSeconds).
          logger.warn({ err, jobId: job.id }, "could not give the run's slot back");
        });
    case "wait":
      await job.moveToDelayed(result.until, token);
      await result.recheck();
      throw new DelayedError();
    case "refused":
      throw new FailedForGood(result.reason, result.statusWritten);
  }
}
