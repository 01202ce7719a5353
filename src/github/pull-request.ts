/**
 * One draft pull request per issue: branch `agent-fix/issue-N`, opened once and updated on every
 * retrigger, never a second one. Review is requested from whoever asked for the run.
 */
import { GitHubError } from "../errors.js";
import { type GitHubApi, httpStatus, type RepoRef } from "./api.js";
import { fitComment } from "./limits.js";

export function fixBranchName(issueNumber: number): string {
  return `agent-fix/issue-${issueNumber}`;
}

export interface PullRequestInput extends RepoRef {
  branch: string;
  base: string;
  title: string;
  body: string;
}

export interface PullRequestResult {
  number: number;
  url: string;
  created: boolean;
}

async function findOpen(api: GitHubApi, input: PullRequestInput) {
  const { data } = await api.rest.pulls.list({
    owner: input.owner,
    repo: input.repo,
    head: `${input.owner}:${input.branch}`,
    state: "open",
  });
  return data[0];
}

export async function openOrUpdatePullRequest(
  api: GitHubApi,
  input: PullRequestInput,
): Promise<PullRequestResult> {
  const body = fitComment(input.body);
  const update = async (number: number): Promise<PullRequestResult> => {
    const { data } = await api.rest.pulls.update({
      owner: input.owner,
      repo: input.repo,
      pull_number: number,
      title: input.title,
      body,
    });
    return { number: data.number, url: data.html_url, created: false };
  };
  const existing = await findOpen(api, input);
  if (existing) return update(existing.number);
  try {
    const { data } = await api.rest.pulls.create({
      owner: input.owner,
      repo: input.repo,
      title: input.title,
      head: input.branch,
      base: input.base,
      body,
      draft: true,
    });
    return { number: data.number, url: data.html_url, created: true };
  } catch (error) {
    // Another worker opened it between our list and create: update that one instead.
    if (httpStatus(error) === 422) {
      const raced = await findOpen(api, input);
      if (raced) return update(raced.number);
    }
    const status = httpStatus(error);
    throw new GitHubError(
      `Could not open the pull request for ${input.branch}: ${(error as Error).message}`,
      {
        code: "pull_request_failed",
        retryable: status === undefined || status >= 500 || status === 429,
        cause: error,
      },
    );
  }
}

/**
 * Requests review from `login`. Returns false (without throwing) when GitHub refuses, e.g. the person
 * is not a collaborator or is the pull request's author: a review request is a courtesy, not the result.
 */
export async function requestReview(
  api: GitHubApi,
  repo: RepoRef,
  pullNumber: number,
  login: string,
): Promise<boolean> {
  try {
    await api.rest.pulls.requestReviewers({ ...repo, pull_number: pullNumber, reviewers: [login] });
    return true;
  } catch (error) {
    if (httpStatus(error) === 422) return false;
    throw error;
  }
}
