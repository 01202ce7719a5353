/**
 * Changes requested on the app's own pull request. TODO: enqueue a review job (trigger "review",
 * `pullNumber`) once the worker runs them; until then the request is logged and acknowledged.
 */
import type { Context } from "probot";
import { fromBot, type HandlerDeps } from "./deps.js";

const FIX_BRANCH = /^agent-fix\/issue-(\d+)$/;

export async function onPullRequestReviewSubmitted(
  context: Context<"pull_request_review.submitted">,
  _deps: HandlerDeps,
): Promise<void> {
  const { payload } = context;
  if (fromBot(payload.sender) || payload.review.state !== "changes_requested") return;
  const match = FIX_BRANCH.exec(payload.pull_request.head.ref);
  if (!match || payload.pull_request.user?.type !== "Bot") return;
  context.log.info(
    { pull: payload.pull_request.number, issue: Number(match[1]), reviewer: payload.sender.login },
    "changes requested on an agent-fix pull request (review runs are not implemented yet)",
  );
}
