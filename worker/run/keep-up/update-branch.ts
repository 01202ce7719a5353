/**
 * Bringing the app's branch up to date with its base without the agent, as the operator chose
 * (`worker.keepUp.strategy`): a merge by GitHub (POST /repos/{o}/{r}/merges, which never rewrites a
 * commit), or a rebase on the host, force-pushed only when every commit on the branch is the app's
 * (otherwise it merges, and says why). A conflict is the conflict round's (rebase-round.ts): a merge, or
 * for a rebase the app's change replayed on the base (merge/start-merge.ts).
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { githubFailure } from "../../../src/shared/github/index.js";
import type { KeepUpStrategy } from "../../config/worker-tuning.js";
import { cloneRepository } from "../checkout/clone.js";
import { git } from "../checkout/git.js";
import type { OpenRun } from "../open/open-run.js";
import { peopleOnBranch } from "../open/peoples-commits.js";
import type { Issue } from "../open/task.js";
import { makeCheckoutRoot } from "../open/work-dirs.js";
import type { PullToUpdate } from "./pull-to-update.js";

/**
 * What the update did; `note` says why it merged when the operator chose a rebase. A conflict is resolved
 * by the agent as a merge, or, `linear`, as the branch's change replayed on the base (a rebase whose
 * branch holds only the app's commits).
 */
export type BranchUpdate = { note?: string | undefined } & (
  | { kind: "current" }
  | { kind: "merged"; sha: string }
  | { kind: "rebased"; sha: string }
  | { kind: "conflict"; linear?: boolean }
);

export async function updateBranch(
  run: OpenRun,
  issue: Issue,
  pull: PullToUpdate,
  strategy: KeepUpStrategy,
): Promise<BranchUpdate> {
  if (strategy === "merge") return await mergeBase(run, pull);
  const { owner, repo } = run.job.data;
  const people = await peopleOnBranch(
    await run.credentials.contentsReader(),
    { owner, repo },
    pull.base,
    pull.branch,
    run.parts.identity,
  );
  if (people?.length) {
    const who = people.map((login) => `@${login}`).join(", ");
    const note = `A rebase would rewrite commits by ${who}, so \`${pull.base}\` was merged in instead.`;
    return { ...(await mergeBase(run, pull)), note };
  }
  // Every commit on the branch is the app's: a conflicting rebase is replayed and resolved by the agent,
  // and force-pushed only while the branch is still where it was (a lease), so nobody's commit is lost.
  return await rebaseOnHost(run, issue, pull);
}

/** GitHub merges the base into the branch as the app: 201 a merge commit, 204 nothing to merge, 409 a conflict. */
async function mergeBase(run: OpenRun, pull: PullToUpdate): Promise<BranchUpdate> {
  const { owner, repo } = run.job.data;
  const writer = await run.credentials.contentsWriter();
  const merged = await writer.rest.repos
    .merge({
      owner,
      repo,
      base: pull.branch,
      head: pull.base,
      commit_message: `Merge ${pull.base} into ${pull.branch}`,
    })
    .catch((error: unknown) => {
      if ((error as { status?: number }).status === 409) return "conflict" as const;
      throw githubFailure(error, `merging ${pull.base} into ${pull.branch}`);
    });
  if (merged === "conflict") return { kind: "conflict" };
  // Octokit types only the 201; GitHub answers 204 when the base is already in the branch.
  if ((merged.status as number) === 204) return { kind: "current" };
  return { kind: "merged", sha: merged.data.sha };
}

/**
 * The branch's commits (all the app's) replayed on the base by git on the host, committed as the app,
 * and pushed with a lease on the commit it started from: a push that came meanwhile is never lost.
 */
async function rebaseOnHost(run: OpenRun, issue: Issue, pull: PullToUpdate): Promise<BranchUpdate> {
  const root = await makeCheckoutRoot(run.parts.workRoot);
  try {
    const checkout = await cloneRepository({
      cloneUrl: issue.repository.cloneUrl,
      token: await run.credentials.token("clone"),
      dir: join(root, "repo"),
      branch: pull.branch,
      depth: 0,
      signal: run.signal,
    });
    const dir = checkout.dir;
    await git(["fetch", "--quiet", "--no-tags", "origin", `refs/heads/${pull.base}`], {
      cwd: dir,
      token: await run.credentials.token("clone"),
      signal: run.signal,
    });
    const base = (await git(["rev-parse", "FETCH_HEAD"], { cwd: dir })).trim();
    const current = await git(["merge-base", "--is-ancestor", base, "HEAD"], { cwd: dir }).then(
      () => true,
      () => false,
    );
    if (current) return { kind: "current" };
    const { name, email } = run.parts.identity;
    const identity = ["-c", `user.name=${name}`, "-c", `user.email=${email}`];
    const rebased = await git([...identity, "rebase", "--quiet", "--no-autosquash", base], { cwd: dir }).then(
      () => true,
      async () => {
        await git(["rebase", "--abort"], { cwd: dir }).catch(() => {});
        return false;
      },
    );
    if (!rebased) return { kind: "conflict", linear: true };
    await git(
      [
        "push",
        "--quiet",
        `--force-with-lease=refs/heads/${pull.branch}:${checkout.headSha}`,
        "origin",
        `HEAD:refs/heads/${pull.branch}`,
      ],
      { cwd: dir, token: await run.credentials.token("push"), signal: run.signal },
    );
    return { kind: "rebased", sha: (await git(["rev-parse", "HEAD"], { cwd: dir })).trim() };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
