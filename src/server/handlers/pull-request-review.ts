/**
 * Changes requested on the app's own pull request (opened by its bot user, head branch
 * `agent-fix/issue-N` in the same repository, see github/own-pull.ts) start a review run: the agent addresses the review on that branch. Only reviews from
 * users with write access count; any other review, or a review on someone else's pull request, is
 * ignored. A review run shares the issue's job id, so it never runs beside the issue's own run: while
 * one is queued or running the review is queued, and one follow-up round takes all that came in.
 */
import type { Context } from "probot";
import { issueOfFixBranch } from "../../shared/fix-branch.js";
import { ownFixIssue, type PullOwnership } from "../../shared/github/own-pull.js";
import { hasWriteAccess } from "../../shared/github/permissions.js";
import { queueFeedback } from "../../shared/queue/feedback.js";
import type { FixJobData } from "../../shared/queue/job.js";
import { type EventContext, fromBot, type HandlerDeps, type IssueTarget, targetOf } from "./deps.js";
import { startRun } from "./runs.js";

/**
 * The issue number when the pull request is the app's own fix pull request (its bot opened it on the
 * repository's own `agent-fix/issue-N`); null otherwise.
 */
export async function fixIssueOf(
  pull: PullOwnership,
  repositoryFullName: string,
  deps: Pick<HandlerDeps, "appLogin">,
): Promise<number | null> {
  // Checked before asking who the app is, so most pull requests cost no API call.
  if (issueOfFixBranch(pull.head.ref) === null) return null;
  return ownFixIssue(pull, repositoryFullName, await deps.appLogin());
}

/**
 * Enqueues a review run of `target` (the issue) on pull request `pullNumber`, or, while a run of that
 * issue is queued or running, queues the feedback for the follow-up round after it.
 */
export async function startReviewRun(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  login: string,
  ids: { pullNumber: number } & Pick<FixJobData, "reviewId" | "commentId">,
  react: () => Promise<unknown>,
): Promise<void> {
  const result = await startRun(context, deps, target, login, "review", react, ids);
  if (result.status === "duplicate") await queueForFollowUp(context, deps, target, login, ids);
}

/**
 * A run of the issue is queued or running: the feedback waits for it, and once it has ended one
 * follow-up round addresses everything that came in meanwhile (src/shared/queue/feedback.ts).
 */
async function queueForFollowUp(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  login: string,
  ids: { pullNumber: number } & Pick<FixJobData, "reviewId" | "commentId">,
): Promise<void> {
  const waiting = await queueFeedback(deps.queue, target, {
    installationId: target.installationId,
    ...(target.accountId ? { accountId: target.accountId } : {}),
    owner: target.owner,
    repo: target.repo,
    pullNumber: ids.pullNumber,
    by: login,
    ...(ids.reviewId ? { reviewId: ids.reviewId } : {}),
    ...(ids.commentId ? { commentId: ids.commentId } : {}),
  });
  const others = waiting > 1 ? ` together with the ${waiting - 1} other review(s) waiting` : "";
  await context.octokit.rest.issues.createComment({
    owner: target.owner,
    repo: target.repo,
    issue_number: ids.pullNumber,
    body: `@${login} an agent-fix run for #${target.issueNumber} is queued or running; this is queued and will be addressed once it has finished${others}, in one follow-up round. Progress is shown on #${target.issueNumber}.`,
  });
}

export async function onPullRequestReviewSubmitted(
  context: Context<"pull_request_review.submitted">,
  deps: HandlerDeps,
): Promise<void> {
  const { payload } = context;
  if (fromBot(payload.sender) || payload.review.state !== "changes_requested") return;
  const issueNumber = await fixIssueOf(payload.pull_request, payload.repository.full_name, deps);
  if (issueNumber === null) return;
  const target = targetOf(payload, issueNumber);
  if (!target) return;
  const pullNumber = payload.pull_request.number;
  const login = payload.sender.login;
  const repo = { owner: target.owner, repo: target.repo };
  const reply = (body: string) =>
    context.octokit.rest.issues.createComment({ ...repo, issue_number: pullNumber, body });
  context.log.info({ pull: pullNumber, issue: issueNumber, reviewer: login }, "changes requested");
  if (payload.pull_request.state !== "open") return;
  if (!(await hasWriteAccess(context.octokit, repo, login))) {
    await reply(
      `@${login} agent-fix acts on reviews only from people with write access to this repository, so it will not change this pull request for this review. A maintainer can request changes instead.`,
    );
    return;
  }
  await startReviewRun(context, deps, target, login, { pullNumber, reviewId: payload.review.id }, () =>
    reply(
      `@${login} agent-fix is working on your review; it will push a new commit to \`${payload.pull_request.head.ref}\`. Progress is shown on #${issueNumber}.`,
    ),
  );
}
