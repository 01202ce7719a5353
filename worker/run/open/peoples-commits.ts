/**
 * A person's commits on the issue's branch are never overwritten. A fix run starts from the default
 * branch and force-pushes `agent-fix/issue-N`; when that branch already holds commits the app did not
 * make (a maintainer's fix-up, a suggestion applied on GitHub), the run starts from the branch instead,
 * as a review round does: cloned beside the default branch, a new commit pushed on top, never a force.
 */

import { fixBranch } from "../../../src/shared/fix-branch.js";
import { githubFailure } from "../../../src/shared/github/index.js";
import type { CommitIdentity } from "../push/commit.js";
import type { OpenRun } from "./open-run.js";
import type { Task } from "./task.js";

/** A commit of GET /repos/{o}/{r}/compare/{base}...{head}, as far as who made it goes. */
interface ComparedCommit {
  sha: string;
  /** The GitHub account of the commit's author: null, or empty, when its address links to none. */
  author: { login?: string } | null;
  commit: { author: { name?: string; email?: string } | null };
}

/** GitHub's compare, read with a token that may read contents (GET /repos/{o}/{r}/compare/{base}...{head}). */
interface ContentsApi {
  rest: {
    repos: {
      compareCommitsWithBasehead(params: {
        owner: string;
        repo: string;
        basehead: string;
        per_page?: number;
      }): Promise<{ data: { commits: ComparedCommit[] } }>;
    };
  };
}

/** Someone who made commits on the branch that the app did not make, and how many. */
interface PersonsCommits {
  /** The GitHub login, or the commit's author name (or short sha) when GitHub links it to no account. */
  who: string;
  commits: number;
}

/**
 * `task` unchanged when the issue's branch does not exist or holds only the app's commits; otherwise the
 * task on that branch, and the status comment, from its first update on, says plainly that the run
 * builds on those commits (whose, how many) and how to start afresh instead.
 */
export async function keepPeoplesCommits(run: OpenRun, task: Task): Promise<Task> {
  if (task.existingBranch) return task;
  const branch = fixBranch(task.issue.number);
  const people = await peoplesCommitsOn(
    await run.credentials.contentsReader(),
    { owner: run.job.data.owner, repo: run.job.data.repo },
    task.issue.repository.defaultBranch,
    branch,
    run.parts.identity,
  );
  if (people === null || people.length === 0) return task;
  run.log.info({ branch, people }, "the branch holds commits not made by the app: the run starts from it");
  run.status.startsFrom(
    buildsOnNote(branch, task.issue.repository.defaultBranch, people, run.parts.startRules.label),
  );
  return { ...task, existingBranch: branch };
}

/**
 * What the status comment says of a run that starts from a branch holding people's commits: that it
 * builds on them (whose, how many), that they are kept, and how to start afresh from the default branch.
 */
export function buildsOnNote(
  branch: string,
  defaultBranch: string,
  people: readonly PersonsCommits[],
  label: string,
): string {
  const total = people.reduce((sum, p) => sum + p.commits, 0);
  const whose = people.map((p) => `@${p.who} (${p.commits})`).join(", ");
  return [
    `**Started from \`${branch}\`, not \`${defaultBranch}\`:** this run builds on the commits by ${whose} on that branch (${total} ${total === 1 ? "commit" : "commits"} agent-fix did not make).`,
    "They are kept: the change goes on top as a new commit, never a force-push.",
    `To start afresh from \`${defaultBranch}\` instead: comment \`/agent-fix stop\`, delete the branch \`${branch}\` (its pull request closes with it), then add the \`${label}\` label again.`,
  ].join(" ");
}

/**
 * The logins (or names, for a commit GitHub links to no account) of who made the commits on `branch`
 * that are not on `base` and not the app's; null when the branch does not exist.
 */
export async function peopleOnBranch(
  api: ContentsApi,
  repo: { owner: string; repo: string },
  base: string,
  branch: string,
  app: CommitIdentity,
): Promise<string[] | null> {
  const people = await peoplesCommitsOn(api, repo, base, branch, app);
  return people === null ? null : people.map((p) => p.who);
}

/** Who made the commits on `branch` not on `base` and not the app's, with their counts; null: no branch. */
export async function peoplesCommitsOn(
  api: ContentsApi,
  repo: { owner: string; repo: string },
  base: string,
  branch: string,
  app: CommitIdentity,
): Promise<PersonsCommits[] | null> {
  const compared = await api.rest.repos
    .compareCommitsWithBasehead({ ...repo, basehead: `${base}...${branch}`, per_page: 100 })
    .catch((error: unknown) => {
      // No such branch yet: the first run of the issue, or its branch deleted since.
      if ((error as { status?: number }).status === 404) return null;
      throw githubFailure(error, `comparing ${branch} with ${base}`);
    });
  if (!compared) return null;
  const counts = new Map<string, number>();
  for (const c of compared.data.commits.filter((c) => !byApp(c, app))) {
    const who = c.author?.login || c.commit.author?.name || c.sha.slice(0, 7);
    counts.set(who, (counts.get(who) ?? 0) + 1);
  }
  return [...counts].map(([who, commits]) => ({ who, commits }));
}

/** The app's own commits: authored as its `SLUG[bot]` account, or under its commit address. */
function byApp(commit: ComparedCommit, app: CommitIdentity): boolean {
  if (commit.author?.login) return commit.author.login === app.name;
  return commit.commit.author?.email === app.email;
}
