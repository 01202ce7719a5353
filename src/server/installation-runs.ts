/**
 * The runs of an installation (or of some of its repositories) queued or running now, found by
 * reading the live jobs' data (ids only). An uninstall cancels them all; it is rare, so a scan of the
 * live jobs (bounded by the queue's length) is cheaper than keeping an index in step with every job.
 */
import { requestCancel } from "../shared/queue/cancel.js";
import type { FixQueue } from "../shared/queue/fix-queue.js";
import { parseFixJobData } from "../shared/queue/job.js";

const LIVE = ["active", "wait", "delayed", "prioritized", "waiting-children"] as const;

interface Which {
  installationId: number;
  /** Only these repositories; all of the installation's when left out. */
  repoIds?: readonly number[];
}

/** Cancels every queued or running run that matches; returns the job ids told to stop. */
export async function cancelInstallationRuns(
  fixQueue: FixQueue,
  which: Which,
  by: string,
  reason: string,
): Promise<string[]> {
  const jobs = await fixQueue.queue.getJobs([...LIVE]);
  const ids = jobs.flatMap((job) => {
    if (!job?.id) return [];
    const data = parseFixJobData(job.data);
    if (data.installationId !== which.installationId) return [];
    if (which.repoIds && !which.repoIds.includes(data.repoId)) return [];
    return [job.id];
  });
  const outcomes = await Promise.all(ids.map((id) => requestCancel(fixQueue, id, by, reason)));
  return outcomes.filter((outcome) => outcome.status !== "none").map((outcome) => outcome.jobId);
}
