/**
 * Changes requested on the app's own pull request. Review runs (the agent addressing the review on
 * the same branch) are not implemented yet (TODO: enqueue trigger "review" with `pullNumber` once the
 * worker runs them); until then the reviewer is told what to do instead of hearing nothing.
 */
import type { Context } from "probot";
import { fromBot, type HandlerDeps } from "./deps.js";

const FIX_BRANCH = /^agent-fix\/issue-(\d+)$/;

export async function onPullRequestReviewSubmitted(
  context: Context<"pull_request_review.submitted">,
  deps: HandlerDeps,
): Promise<void> {
  const { payload } = context;
  if (fromBot(payload.sender) || payload.review.state !== "changes_requested") return;
  const match = FIX_BRANCH.exec(payload.pull_request.head.ref);
  if (!match || payload.pull_request.user?.type !== "Bot") return;
  const issue = Number(match[1]);
  context.log.info(
    { pull: payload.pull_request.number, issue, reviewer: payload.sender.login },
    "changes requested",
  );
  await context.octokit.rest.issues.createComment({
    owner: payload.repository.owner.login,
    repo: payload.repository.name,
    issue_number: payload.pull_request.number,
    body: [
      `@${payload.sender.login} agent-fix does not act on reviews yet.`,
      `Push your own commits to \`${payload.pull_request.head.ref}\`, or describe what is missing on #${issue} and comment \`${deps.settings.command}\` there to start a new run (it updates this pull request).`,
    ].join(" "),
  });
}
