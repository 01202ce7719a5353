/**
 * A push to a branch that the app's open pull requests target: the base moved, which is when a pull
 * request starts to conflict. Each of the app's pull requests on it (its `agent-fix/issue-N` branches of
 * this repository, opened by the app) gets one look queued (src/shared/queue/base-moves.ts); a worker asks
 * GitHub whether it conflicts once GitHub has computed it, and queues a rebase round when the operator
 * wants that (`worker.keepUp.whenConflicting`). Nothing here waits for GitHub's mergeability.
 */
import type { Context } from "probot";
import { issueOfFixBranch } from "../../shared/fix-branch.js";
import { queueBaseMove } from "../../shared/queue/base-moves.js";
import type { HandlerDeps } from "./deps.js";
import { targetOf } from "./deps.js";
import { fixIssueOf } from "./pull-request-review.js";

const BRANCH_REF = "refs/heads/";

export async function onPush(context: Context<"push">, deps: HandlerDeps): Promise<void> {
  const { payload } = context;
  // A tag, a deleted branch, or a push to one of the app's own branches (never a base of its pull requests).
  if (!payload.ref.startsWith(BRANCH_REF) || payload.deleted) return;
  const base = payload.ref.slice(BRANCH_REF.length);
  if (issueOfFixBranch(base) !== null) return;
  const owner = payload.repository.owner;
  if (!owner) return;
  const repository = { ...payload.repository, owner };
  const repo = { owner: owner.login, repo: repository.name };
  const pulls = await context.octokit.paginate(context.octokit.rest.pulls.list, {
    ...repo,
    base,
    state: "open",
    per_page: 100,
  });
  for (const pull of pulls) {
    const issueNumber = await fixIssueOf(pull, payload.repository.full_name, deps);
    if (issueNumber === null) continue;
    const target = targetOf({ ...payload, repository }, issueNumber);
    if (!target) return;
    await queueBaseMove(deps.baseMoves, {
      ...target,
      pullNumber: pull.number,
      base,
      baseSha: payload.after,
    });
    context.log.info(
      { pull: pull.number, base, sha: payload.after },
      "base moved: its mergeability queued to be read",
    );
  }
}
