/**
 * A rebase round, the fix run's sibling: `/agent-fix rebase` on the app's pull request brings its branch
 * up to date with its base, as the operator chose (`worker.keepUp.strategy`).
 *   1. read the pull request: still open, still the app's own for the issue
 *   2. update it without the agent: GitHub merges the base in, or git rebases it on the host (only the
 *      app's commits are ever rewritten); already up to date is said as such
 *   3. a conflict is a round of its own: `runFix` on the branch with the merge started on the host, the
 *      conflicted files the agent's task, the gate as always, one merge commit pushed; for a rebase of
 *      the app's own commits, the change replayed on the base instead, force-pushed with a lease (not
 *      once every run on the pull request together reached the operator's cost ceiling)
 *   4. a reply on the pull request and the status say what was done
 */
import type { RunOutcome } from "../run-end.js";
import { keepUpPublisher, keptUpReply, keptUpStatus } from "./keep-up/keep-up-reply.js";
import { pullToUpdate } from "./keep-up/pull-to-update.js";
import { updateBranch } from "./keep-up/update-branch.js";
import type { OpenRun } from "./open/open-run.js";
import { pullCostRefusal } from "./open/pull-cost-ceiling.js";
import type { KeptUp } from "./open/status-comment.js";
import { type Issue, keptOnFailure, publisherLinks } from "./open/task.js";
import { runFix } from "./run-fix.js";

export async function rebaseRound(run: OpenRun, issue: Issue): Promise<RunOutcome> {
  const pull = await pullToUpdate(run, issue);
  const update = await updateBranch(run, issue, pull, run.parts.agent.operator.worker.keepUp.strategy);
  if (update.kind === "conflict") {
    const linear = update.linear === true;
    run.log.info({ note: update.note, linear }, "the base conflicts with the branch: the agent resolves it");
    const done = linear
      ? `resolved the conflicts with its base branch and rebased pull request #${pull.number} onto it`
      : `resolved the conflicts with its base branch in a merge commit on pull request #${pull.number}`;
    // The status says which it was: a merge commit, or the branch replayed on its base.
    const status = { ...run.status, succeeded: statusSaying(run, { done, tested: true }) };
    const refused = await pullCostRefusal(run, pull.number, "rebase");
    if (refused) return refused;
    return runFix({ ...run, status }, issue, {
      issue,
      ask: { number: issue.number, title: issue.title, body: issue.body },
      existingBranch: pull.branch,
      mergeFrom: pull.base,
      linear,
      // A replay is the app's change again, on the new base: it keeps the change's title.
      commitTitle: linear ? issue.title : `Merge ${pull.base} into ${pull.branch}`,
      publisher: keptOnFailure(
        run,
        keepUpPublisher(run.octokit, run.job.data, {
          pull,
          note: update.note,
          linear,
          appLogin: run.parts.identity.name,
          options: publisherLinks(run),
        }),
      ),
      pullRequestTemplate: false,
    });
  }
  run.log.info({ update: update.kind }, "the branch is up to date with its base, without the agent");
  const { owner, repo, requestedBy } = run.job.data;
  await run.octokit.rest.issues.createComment({
    owner,
    repo,
    issue_number: pull.number,
    body: keptUpReply({ login: requestedBy, appLogin: run.parts.identity.name }, pull, update),
  });
  await run.status.succeeded({ number: pull.number, url: pull.url }, keptUpStatus(pull, update));
  return { kind: "pull_request", number: pull.number, url: pull.url, trajectory: null, timings: {} };
}

function statusSaying(run: OpenRun, keptUp: KeptUp): OpenRun["status"]["succeeded"] {
  return (pullRequest, given) => run.status.succeeded(pullRequest, given ?? keptUp);
}
