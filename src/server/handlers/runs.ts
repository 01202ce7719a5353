/**
 * Start and cancel, shared by the label, comment and close handlers. A start enqueues (one job per
 * issue, whatever arrives) with the issue's status comment (reused across runs, so an issue keeps one)
 * and adds an eyes reaction; a cancel removes a waiting job or tells the worker holding it.
 */
import { httpStatus } from "../../shared/github/api.js";
import { createStatusComment, type StatusView, updateStatusComment } from "../../shared/github/status.js";
import { isRateLimited } from "../../shared/github/throttle.js";
import { requestCancel } from "../../shared/queue/cancel.js";
import { clearFeedback } from "../../shared/queue/feedback.js";
import { type EnqueueResult, enqueueFix } from "../../shared/queue/fix-queue.js";
import { type FixJobData, fixJobId, type JobTrigger } from "../../shared/queue/job.js";
import { statusCommentKey } from "../../shared/queue/keys.js";
import type { EventContext, HandlerDeps, IssueTarget } from "./deps.js";

const STATUS_KEY_TTL_S = 90 * 24 * 60 * 60;

/** Edits the issue's earlier status comment back to "queued", or posts one; returns its id. */
async function queuedStatusComment(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  requestedBy: string,
) {
  const key = statusCommentKey(deps.queue, target.repoId, target.issueNumber);
  const view: StatusView = { kind: "progress", phase: "queued" };
  const repo = { owner: target.owner, repo: target.repo };
  const earlier = Number(await deps.queue.redis.get(key));
  if (earlier > 0) {
    try {
      await updateStatusComment(context.octokit, repo, earlier, view, { requestedBy });
      return earlier;
    } catch (error) {
      if (httpStatus(error) !== 404) throw error; // deleted by someone: post a new one
    }
  }
  const id = await createStatusComment(context.octokit, { ...repo, issueNumber: target.issueNumber }, view, {
    requestedBy,
  });
  await deps.queue.redis.set(key, String(id), "EX", STATUS_KEY_TTL_S);
  return id;
}

/**
 * The status comment for the job, unless GitHub rate-limits it beyond what the webhook can wait for:
 * then the run is queued all the same and its worker posts the comment when the run starts.
 */
async function statusCommentOrLater(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  requestedBy: string,
): Promise<Partial<FixJobData>> {
  try {
    return { statusCommentId: await queuedStatusComment(context, deps, target, requestedBy) };
  } catch (error) {
    if (!isRateLimited(error)) throw error;
    context.log.warn({ err: error }, "status comment rate-limited: queued without it, the worker posts it");
    return {};
  }
}

export async function startRun(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  requestedBy: string,
  trigger: JobTrigger,
  react: () => Promise<unknown>,
  /** Review and CI runs: the pull request and the review or the failing checks (ids only). */
  review: Pick<FixJobData, "pullNumber" | "reviewId" | "commentId" | "ci"> = {},
): Promise<EnqueueResult> {
  const result = await enqueueFix(
    deps.queue,
    { ...target, ...review, requestedBy, trigger, deliveryId: context.id },
    () => statusCommentOrLater(context, deps, target, requestedBy),
  );
  context.log.info({ jobId: result.jobId, status: result.status, trigger }, "agent-fix start");
  // The review and rebase handlers answer a refused round themselves, on the pull request; a CI round waits for the next commit.
  if (result.status === "duplicate" && (trigger === "review" || trigger === "rebase" || trigger === "ci"))
    return result;
  if (result.status === "duplicate" && result.state === "cancelling") {
    await context.octokit.rest.issues.createComment({
      owner: target.owner,
      repo: target.repo,
      issue_number: target.issueNumber,
      body: `@${requestedBy} the previous run is still stopping, so no new run was started. Try again in a minute.`,
    });
    return result;
  }
  // The reaction acknowledges the event; a redelivered label already has it. Failing to add it must
  // not fail the start.
  if (result.status === "duplicate" && trigger === "label") return result;
  await react().catch((error: unknown) =>
    context.log.warn({ err: error }, "could not add the eyes reaction"),
  );
  return result;
}

export async function cancelRun(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  by: string,
  reason: string,
): Promise<void> {
  const jobId = fixJobId(target.repoId, target.issueNumber);
  const outcome = await requestCancel(deps.queue, jobId, by, reason);
  // Stopped means stopped: reviews waiting for this run start no follow-up round after it.
  await clearFeedback(deps.queue, target);
  context.log.info({ jobId, status: outcome.status, by, reason }, "agent-fix cancel");
  // A removed job never reaches a worker: its status comment is finished here. A running one is
  // finished by the worker that holds it.
  if (outcome.status === "removed" && outcome.data.statusCommentId) {
    await updateStatusComment(
      context.octokit,
      { owner: target.owner, repo: target.repo },
      outcome.data.statusCommentId,
      { kind: "cancelled", by, reason },
      { requestedBy: outcome.data.requestedBy },
    );
  }
}
