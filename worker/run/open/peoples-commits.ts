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

/**
 * `task` unchanged when the issue's branch does not exist or holds only the app's commits; otherwise the
 * task on that branch, and the status says whose commits it keeps.
 */
export async function keepPeoplesCommits(run: OpenRun, task: Task): Promise<Task> {
  if (task.existingBranch) return task;
  const branch = fixBranch(task.issue.number);
  const people = await peopleOnBranch(
    await run.credentials.contentsReader(),
    { owner: run.job.data.owner, repo: run.job.data.repo },
    task.issue.repository.defaultBranch,
    branch,
    run.parts.identity,
  );
  if (people === null || people.length === 0) return task;
  const who = people.map((login) => `@${login}`).join(", ");
  run.log.info({ branch, people }, "the branch holds commits not made by the app: the run starts from it");
  run.status.configured(
    `Started from \`${branch}\`, not the default branch: it holds commits by ${who}, which are kept; the change goes on top.`,
  );
  return { ...task, existingBranch: branch };
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
  const compared = await api.rest.repos
    .compareCommitsWithBasehead({ ...repo, basehead: `${base}...${branch}`, per_page: 100 })
    .catch((error: unknown) => {
      // No such branch yet: the first run of the issue, or its branch deleted since.
      if ((error as { status?: number }).status === 404) return null;
      throw githubFailure(error, `comparing ${branch} with ${base}`);
    });
  if (!compared) return null;
  const people = compared.data.commits
    .filter((c) => !byApp(c, app))
    .map((c) => c.author?.login ?? c.commit.author?.name ?? c.sha.slice(0, 7));
  return [...new Set(people)];
}

/** The app's own commits: authored as its `SLUG[bot]` account, or under its commit address. */
function byApp(commit: ComparedCommit, app: CommitIdentity): boolean {
  if (commit.author?.login) return commit.author.login === app.name;
  return commit.commit.author?.email === app.email;
}
