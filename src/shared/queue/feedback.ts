/**
 * Review feedback that arrives while a run of the issue is queued or running is kept, not refused:
 * it waits in a list per issue, and once that run has ended one follow-up review run takes all of it
 * (worker/jobs/job-ends.ts starts it from whichever worker ran the job). The list holds ids only, like jobs.
 */
import { z } from "zod";
import { type EnqueueResult, enqueueFix, type FixQueue } from "./fix-queue.js";
import { type Feedback, type FixJobData, feedbackSchema, MAX_FEEDBACK } from "./job.js";
import { feedbackKey, statusCommentKey } from "./keys.js";

const FEEDBACK_TTL_S = 14 * 24 * 60 * 60;

/** What a follow-up run needs besides the feedback: whom and which pull request it is for. */
const pendingSchema = feedbackSchema.extend({
  installationId: z.number().int().positive(),
  accountId: z.number().int().positive().optional(),
  owner: z.string().min(1),
  repo: z.string().min(1),
  pullNumber: z.number().int().positive(),
});
type PendingFeedback = z.infer<typeof pendingSchema>;

interface IssueIds {
  repoId: number;
  issueNumber: number;
}

/** Keeps feedback for the run after the current one; returns how many are waiting now. */
export async function queueFeedback(
  queue: FixQueue,
  issue: IssueIds,
  pending: PendingFeedback,
): Promise<number> {
  const key = feedbackKey(queue, issue.repoId, issue.issueNumber);
  const [[, length]] = (await queue.redis
    .multi()
    .rpush(key, JSON.stringify(pendingSchema.parse(pending)))
    .expire(key, FEEDBACK_TTL_S)
    .exec()) as [[Error | null, number]];
  return length;
}

/** Drops waiting feedback (the run was stopped: nobody asked for more). */
export async function clearFeedback(queue: FixQueue, issue: IssueIds): Promise<void> {
  await queue.redis.del(feedbackKey(queue, issue.repoId, issue.issueNumber));
}

/** Takes up to MAX_FEEDBACK waiting entries, oldest first, atomically (the rest stay for later). */
async function takeFeedback(queue: FixQueue, issue: IssueIds): Promise<PendingFeedback[]> {
  const key = feedbackKey(queue, issue.repoId, issue.issueNumber);
  const [[, raw]] = (await queue.redis
    .multi()
    .lrange(key, 0, MAX_FEEDBACK - 1)
    .ltrim(key, MAX_FEEDBACK, -1)
    .exec()) as [[Error | null, string[]]];
  return raw.flatMap((text) => {
    const parsed = pendingSchema.safeParse(JSON.parse(text));
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * After a run of the issue has ended: starts one review run that takes all waiting feedback, unless
 * none waits or another run is queued or running (several workers may try; one wins).
 */
export async function startFollowUp(queue: FixQueue, issue: IssueIds): Promise<EnqueueResult | null> {
  return startFollowUpOnce(queue, issue).catch((error: unknown) => {
    if (error instanceof NothingToFollowUp) return null;
    throw error;
  });
}

class NothingToFollowUp extends Error {}

async function startFollowUpOnce(queue: FixQueue, issue: IssueIds): Promise<EnqueueResult | null> {
  const key = feedbackKey(queue, issue.repoId, issue.issueNumber);
  const first = await queue.redis.lindex(key, 0);
  if (!first) return null;
  const head = pendingSchema.parse(JSON.parse(first));
  const base: FixJobData = {
    installationId: head.installationId,
    ...(head.accountId ? { accountId: head.accountId } : {}),
    owner: head.owner,
    repo: head.repo,
    repoId: issue.repoId,
    issueNumber: issue.issueNumber,
    requestedBy: head.by,
    trigger: "review",
    deliveryId: `follow-up-${Date.now()}`,
    pullNumber: head.pullNumber,
  };
  // Taken only by the caller that wins the start, under the queue's claim.
  return enqueueFix(queue, base, async () => {
    const taken = await takeFeedback(queue, issue);
    // Another worker's follow-up took it all between our look and our claim: nothing to run.
    if (taken.length === 0) throw new NothingToFollowUp();
    const feedback: Feedback[] = taken
      .filter((f) => f.pullNumber === head.pullNumber)
      .map((f) => ({
        by: f.by,
        ...(f.reviewId ? { reviewId: f.reviewId } : {}),
        ...(f.commentId ? { commentId: f.commentId } : {}),
      }));
    const statusCommentId = Number(
      await queue.redis.get(statusCommentKey(queue, issue.repoId, issue.issueNumber)),
    );
    return { feedback, ...(statusCommentId > 0 ? { statusCommentId } : {}) };
  });
}
