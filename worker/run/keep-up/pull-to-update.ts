/**
 * The pull request a rebase round brings up to date: it must still be open and the app's own for the
 * job's issue (its `SLUG[bot]` opened it from `agent-fix/issue-N` of this repository).
 */
import { AgentFixError } from "../../../src/shared/errors.js";
import { fixBranch } from "../../../src/shared/fix-branch.js";
import { githubFailure } from "../../../src/shared/github/index.js";
import { ownFixIssue } from "../../../src/shared/github/own-pull.js";
import type { OpenRun } from "../open/open-run.js";
import type { Issue } from "../open/task.js";

export interface PullToUpdate {
  number: number;
  url: string;
  /** The app's branch, `agent-fix/issue-N`. */
  branch: string;
  /** The branch the pull request merges into. */
  base: string;
}

export async function pullToUpdate(run: OpenRun, issue: Issue): Promise<PullToUpdate> {
  const { owner, repo, pullNumber } = run.job.data;
  if (pullNumber === undefined) {
    throw new AgentFixError("This rebase job names no pull request", {
      code: "review_job_invalid",
      fault: "user",
      retryable: false,
      hint: "Comment `/agent-fix rebase` on the pull request again.",
    });
  }
  const { data: pull } = await run.octokit.rest.pulls
    .get({ owner, repo, pull_number: pullNumber })
    .catch((error: unknown) => {
      throw githubFailure(error, `reading pull request #${pullNumber}`);
    });
  if (pull.state !== "open") {
    throw new AgentFixError(`Pull request #${pullNumber} was closed before it could be brought up to date`, {
      code: "pull_request_closed",
      fault: "user",
      retryable: false,
      hint: "Reopen it and comment `/agent-fix rebase` again.",
    });
  }
  const branch = fixBranch(issue.number);
  if (
    pull.head.ref !== branch ||
    ownFixIssue(pull, `${owner}/${repo}`, run.parts.identity.name) !== issue.number
  ) {
    throw new AgentFixError(
      `Pull request #${pullNumber} is not agent-fix's pull request for #${issue.number} (its branch is ${pull.head.ref})`,
      {
        code: "not_fix_pull_request",
        fault: "user",
        retryable: false,
        hint: `agent-fix brings up to date only the pull request it opened from ${branch} of this repository.`,
      },
    );
  }
  return { number: pull.number, url: pull.html_url, branch, base: pull.base.ref };
}
