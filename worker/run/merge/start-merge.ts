/**
 * A rebase round's conflicting merge, started on the host: the base branch merged into the checkout of
 * the app's branch, and what git could not merge committed as it is, conflict markers and all, in a merge
 * commit of the two (never pushed). The agent works on that commit, its task names the conflicted files,
 * and push/ makes the tested tree the merge commit's own (same parents): one merge commit goes out.
 * A linear one (`task.linear`, a rebase of a branch holding only the app's commits) starts from the base
 * instead: the branch's whole change squash-merged onto it, committed with its markers as one commit
 * whose parent is the base; the tested tree becomes that commit's, force-pushed leased on the branch's
 * commit it replaces (push/commit.ts), so a commit pushed meanwhile by anyone is never overwritten.
 */

import type { Checkout } from "../checkout/clone.js";
import { git } from "../checkout/git.js";
import type { OpenRun } from "../open/open-run.js";
import type { Task } from "../open/task.js";

interface Merging {
  /** The checkout at the commit holding the conflict markers (a merge commit, or the replay's). */
  checkout: Checkout;
  /** What the agent is asked: the task's, or the conflicts to resolve. */
  ask: Task["ask"];
  /** A linear replay: the branch's commit it replaces, the lease of its force-push. */
  replaces?: string | undefined;
}

export async function startMerge(run: OpenRun, task: Task, checkout: Checkout): Promise<Merging> {
  if (!task.mergeFrom) return { checkout, ask: task.ask };
  const base = task.mergeFrom;
  const dir = checkout.dir;
  // The merge base is needed: the branch's clone is shallow, the base is fetched with its history.
  await git(["fetch", "--quiet", "--no-tags", "--unshallow", "origin", `refs/heads/${base}`], {
    cwd: dir,
    token: await run.credentials.token("clone"),
    signal: run.signal,
  });
  const { name, email } = run.parts.identity;
  const identity = ["-c", `user.name=${name}`, "-c", `user.email=${email}`];
  // A replay starts from the base and brings the branch's whole change onto it (a squash merge): the
  // conflicts are resolved once, in one commit whose parent is the base.
  if (task.linear) await git(["checkout", "--quiet", "-B", checkout.branch, "FETCH_HEAD"], { cwd: dir });
  const merge = task.linear
    ? ["merge", "--quiet", "--squash", checkout.headSha]
    : ["merge", "--quiet", "--no-ff", "--no-commit", "FETCH_HEAD"];
  const clean = await git([...identity, ...merge], { cwd: dir }).then(
    () => true,
    () => false,
  );
  const conflicts = (await git(["diff", "--name-only", "--diff-filter=U", "-z"], { cwd: dir }))
    .split("\0")
    .filter(Boolean);
  await git(["add", "--all"], { cwd: dir });
  const message = task.linear
    ? `Replay ${checkout.branch} on ${base} (with conflicts)`
    : `Merge ${base} (with conflicts)`;
  await git([...identity, "commit", "--quiet", "--no-verify", "-m", message], { cwd: dir });
  const headSha = (await git(["rev-parse", "HEAD"], { cwd: dir })).trim();
  run.log.info(
    { base, conflicts, clean, linear: task.linear === true },
    "conflicts set up on the host for the agent",
  );
  return {
    checkout: { ...checkout, headSha },
    ask: conflictAsk(task, base, checkout.branch, conflicts),
    ...(task.linear ? { replaces: checkout.headSha } : {}),
  };
}

function conflictAsk(task: Task, base: string, branch: string, conflicts: string[]): Task["ask"] {
  const files = conflicts.length
    ? conflicts.map((path) => `- \`${path}\``).join("\n")
    : "(git named none: look for conflict markers)";
  const how = task.linear
    ? `rebasing it onto \`${base}\` conflicts. The change is being replayed on \`${base}\` in this repository`
    : `merging \`${base}\` into it conflicts. The merge is in progress in this repository`;
  return {
    ...task.ask,
    body: [
      (task.ask.body ?? "").trim(),
      "",
      "---",
      "",
      `A change for this issue is committed on \`${branch}\`. Its base branch \`${base}\` moved on, and ` +
        `${how}: the files below ` +
        "hold git's conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`). Resolve every conflict, keeping " +
        `both what \`${base}\` changed and what the change for this issue does, remove the markers, and ` +
        "make sure the tests pass. Change nothing else.",
      "",
      "Conflicted files:",
      files,
    ].join("\n"),
  };
}
