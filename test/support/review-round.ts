/**
 * A maintainer's review round on the sample's pull request, as the e2e files that test one send it: the
 * model's answer (sample-review-comment.jsonl, the agent's reply to a line comment on the median) put
 * where the stack's `replay:` model reads it, a changes-requested review with that line comment, and the
 * wait for the review run to push its commit and post its final status.
 */
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import type { Stack } from "./stack.js";
import { FIXTURES, type IssueRef, waitFor } from "./stack-parts.js";
import { type Delivery, reviewEvent } from "./webhooks.js";

/** The recorded review run's model turns: a comment on why the two middle values are averaged. */
const REVIEW_REPLAY = join(FIXTURES, "replay", "sample-review-comment.jsonl");

/** The line the recorded answer addresses: textstats/stats.py's averaging of the middle values. */
const REVIEWED_LINE = { path: "textstats/stats.py", line: 21 };

/** The head of the issue's branch on the stand-in (agent-fix/issue-N), or undefined before a push. */
export async function branchHead(stack: Stack, issue: IssueRef): Promise<string | undefined> {
  return (await stack.github.branches(issue.owner, issue.repo))[`agent-fix/issue-${issue.number}`];
}

/**
 * Puts the recorded review answer in `replay` and sends @maintainer's changes-requested review on the
 * issue's pull request, with `comment` on the reviewed line. Returns the delivery and the app's answer
 * to it (the HTTP status), for the caller to assert.
 */
export async function requestChanges(
  stack: Stack,
  issue: IssueRef,
  options: { replay: string; comment: string; body?: string },
): Promise<{ review: Delivery; answered: number }> {
  const [pr] = stack.pulls(issue);
  if (!pr) throw new Error(`no pull request for ${issue.owner}/${issue.repo}#${issue.number} to review`);
  await copyFile(REVIEW_REPLAY, options.replay);
  const review = reviewEvent(
    stack.github,
    { owner: issue.owner, repo: issue.repo, pull: pr.number },
    "changes_requested",
    { login: "maintainer" },
    { body: options.body ?? "", comments: [{ ...REVIEWED_LINE, body: options.comment }] },
  );
  return { review, answered: await stack.send(review.event, review.payload) };
}

/**
 * Waits until the branch's head is no longer `before` and the issue's status is final: the review run
 * pushed and finished. Returns the final status's text.
 */
export async function reviewRunPushed(
  stack: Stack,
  issue: IssueRef,
  before: string | undefined,
  timeoutMs: number,
): Promise<string> {
  const status = await waitFor(
    "the review run to push and finish",
    async () => (await branchHead(stack, issue)) !== before && stack.finalStatus(issue),
    timeoutMs,
  );
  return status.body;
}
