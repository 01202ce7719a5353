/**
 * A rebase round queued by itself: the job that just completed found the app's pull request conflicting
 * with its base (`JobResult.conflicting`, asked only when the operator set `worker.keepUp.whenConflicting`).
 * It runs as `/agent-fix rebase` would, for whoever asked for the job, on the same status comment.
 */
import { randomUUID } from "node:crypto";
import type { EnqueueResult } from "../../src/shared/queue/fix-queue.js";
import { enqueueFix, type FixJobData, type FixQueue } from "../../src/shared/queue/index.js";

/** The completed job's `conflicting` pull request, from BullMQ's return value (a JobResult). */
export function conflictingOf(returnvalue: unknown): number | undefined {
  const value = (returnvalue as { conflicting?: unknown } | null)?.conflicting;
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

export function startKeepUpRound(
  queue: FixQueue,
  job: FixJobData,
  pullNumber: number,
): Promise<EnqueueResult> {
  return enqueueFix(queue, {
    installationId: job.installationId,
    ...(job.accountId ? { accountId: job.accountId } : {}),
    owner: job.owner,
    repo: job.repo,
    repoId: job.repoId,
    issueNumber: job.issueNumber,
    requestedBy: job.requestedBy,
    trigger: "rebase",
    deliveryId: `keep-up-${randomUUID()}`,
    pullNumber,
    ...(job.statusCommentId ? { statusCommentId: job.statusCommentId } : {}),
  });
}
