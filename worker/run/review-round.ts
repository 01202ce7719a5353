/**
 * A review round, the fix run's sibling: a maintainer asked for changes on the app's pull request. The
 * agent's task is the issue plus the review, it starts from the pull request's branch, and its change is a
 * new commit there, answered in the review's threads; the pull request is reused, never a second opened.
 * No round starts once every run on the pull request together reached the operator's cost ceiling.
 */
import type { RunOutcome } from "../run-end.js";
import type { OpenRun } from "./open/open-run.js";
import { pullCostRefusal } from "./open/pull-cost-ceiling.js";
import { loadReviewRun, reviewPublisher } from "./open/review-task.js";
import { type Issue, keptOnFailure, publisherLinks } from "./open/task.js";
import { runFix } from "./run-fix.js";

export async function reviewRound(run: OpenRun, issue: Issue): Promise<RunOutcome> {
  const review = await loadReviewRun(
    run.octokit,
    run.job.data,
    { number: issue.number, title: issue.title, body: issue.body },
    run.parts.identity.name,
  );
  const refused = await pullCostRefusal(run, run.job.data.pullNumber!, "review"); // loadReviewRun checked it
  if (refused) return refused;
  const publisher = reviewPublisher(run.octokit, run.job.data, publisherLinks(run));
  return runFix(run, issue, {
    issue,
    ask: review.issue,
    existingBranch: review.existingBranch,
    commitTitle: review.commitTitle,
    publisher: keptOnFailure(run, publisher),
    // A review round answers a review on a pull request already open: no template to fill in.
    pullRequestTemplate: false,
  });
}
