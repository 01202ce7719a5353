/**
 * The final status of a job that ended with no run left to write it (its worker died too often, it was
 * removed while a dead worker held it): a fresh installation client minted on the host, the job's status
 * comment, the reason in a maintainer's words.
 */
import type { FixJobData } from "../../../src/shared/queue/index.js";
import { jobLogger } from "../../log.js";
import type { Abandonment } from "../../run-end.js";
import { writeJobStatus } from "../open/open-run.js";
import { abandonedEnding, endLeftCheckRun, removedEnding } from "../publish/left-check-runs.js";
import type { RunParts } from "../run-parts.js";

export async function writeAbandonedStatus(
  parts: RunParts,
  job: FixJobData,
  abandonment: Abandonment,
  jobId?: string,
): Promise<void> {
  const reason = abandonedReason(abandonment);
  // The check run its last attempt may have left in progress first: once the status is final, nothing
  // of the job is left in progress (ending it never rejects).
  if (jobId)
    await endLeftCheckRun(parts, jobId, abandonedEnding(reason), jobLogger(parts.logger, job, jobId));
  await writeJobStatus(parts, job, (status) => status.failed(reason));
}

/** A job removed from the queue before any worker took it again: the check run it left ends. */
export function endRemovedJob(parts: RunParts, jobId: string): Promise<void> {
  return endLeftCheckRun(parts, jobId, removedEnding(parts.startRules.label), parts.logger.child({ jobId }));
}

/** The reason shown on the issue, in words a maintainer can act on. */
function abandonedReason(abandonment: Abandonment): string {
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
