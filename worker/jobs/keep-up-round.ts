/**
 * A rebase round queued by itself, when the operator set `worker.keepUp.whenConflicting`: the job that just
 * completed found the app's pull request conflicting with its base (`JobResult.conflicting`), or a look
 * after the base moved did (base-moves.ts). It runs as `/agent-fix rebase` would, on the issue's status
 * comment: for whoever asked for the job, or as the app's own when the base moved.
 */
import { randomUUID } from "node:crypto";
import type { BaseMove } from "../../src/shared/queue/base-moves.js";
import type { EnqueueResult } from "../../src/shared/queue/fix-queue.js";
import { enqueueFix, type FixJobData, type FixQueue } from "../../src/shared/queue/index.js";
import { statusCommentKey } from "../../src/shared/queue/keys.js";

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

/** The round for a pull request found conflicting after its base moved: nobody asked, so it is the app's. */
export async function startBaseMoveRound(
  queue: FixQueue,
  move: BaseMove,
  appLogin: string,
): Promise<EnqueueResult> {
  const statusCommentId = Number(
    await queue.redis.get(statusCommentKey(queue, move.repoId, move.issueNumber)),
  );
  return enqueueFix(queue, {
    installationId: move.installationId,
    ...(move.accountId ? { accountId: move.accountId } : {}),
    owner: move.owner,
    repo: move.repo,
    repoId: move.repoId,
    issueNumber: move.issueNumber,
    requestedBy: appLogin,
    trigger: "rebase",
    deliveryId: `base-moved-${move.baseSha}`,
    pullNumber: move.pullNumber,
    ...(statusCommentId > 0 ? { statusCommentId } : {}),
  });
}
