/**
 * One draft pull request per issue: branch `agent-fix/issue-N`, opened once and updated on every
 * retrigger, never a second one. Where GitHub refuses drafts (private repositories of GitHub Free and
 * Pro accounts) it is opened ready for review, its body saying why. Review is requested from whoever
 * asked for the run.
 */
import { GitHubError } from "../../src/shared/errors.js";
import { type GitHubApi, httpStatus, type RepoRef } from "../../src/shared/github/api.js";
import { fitComment } from "../../src/shared/github/limits.js";

interface PullRequestInput extends RepoRef {
  branch: string;
  base: string;
  title: string;
  body: string;
}

interface PullRequestResult {
  number: number;
  url: string;
  created: boolean;
  /** false when GitHub refused a draft and it was opened ready for review. */
  draft: boolean;
}

/** GitHub's 422 message for a draft in a repository whose plan has no drafts. */
const DRAFTS_UNSUPPORTED = /Draft pull requests are not supported/i;

/** The first line of the body of a pull request that could not be a draft. */
export const NOT_A_DRAFT_NOTE =
  "> [!NOTE]\n> **Not a draft:** GitHub does not support draft pull requests in this repository (private " +
  "repositories on GitHub Free and Pro plans), so agent-fix opened it ready for review. Review it as you " +
  "would a draft before merging.\n\n";

/** GitHub's own words in an error answer: the message and each validation error's message. */
export function githubMessage(error: unknown): string {
  const data = (error as { response?: { data?: unknown } } | null)?.response?.data as
    | { message?: unknown; errors?: { message?: unknown }[] }
    | undefined;
  const parts = [data?.message, ...(data?.errors ?? []).map((e) => e?.message)].filter(
    (part): part is string => typeof part === "string" && part !== "",
  );
  return parts.length > 0 ? parts.join(": ") : error instanceof Error ? error.message : String(error);
}

/** The branch's open pull request, if any (GitHub lists at most one per head and base). */
export async function findOpenPullRequest(
  api: GitHubApi,
  input: RepoRef & { branch: string },
): Promise<{ number: number } | undefined> {
  const { data } = await api.rest.pulls.list({
    owner: input.owner,
    repo: input.repo,
    head: `${input.owner}:${input.branch}`,
    state: "open",
  });
  return data[0];
}

/**
 * `listed`: the branch's open pull request as listed ahead, while the change was pushed (a pull request
 * another worker opens meanwhile is found by the create's 422 below).
 */
export async function openOrUpdatePullRequest(
  api: GitHubApi,
  input: PullRequestInput,
  listed?: Promise<{ number: number } | undefined>,
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
    return { number: data.number, url: data.html_url, created: false, draft: data.draft ?? true };
  };
  const existing = await (listed ?? findOpenPullRequest(api, input));
  if (existing) return update(existing.number);
  const create = async (draft: boolean): Promise<PullRequestResult> => {
    const { data } = await api.rest.pulls.create({
      owner: input.owner,
      repo: input.repo,
      title: input.title,
      head: input.branch,
      base: input.base,
      body: draft ? body : fitComment(NOT_A_DRAFT_NOTE + input.body),
      draft,
    });
    return { number: data.number, url: data.html_url, created: true, draft };
  };
  try {
    return await create(true).catch((error: unknown) => {
      if (httpStatus(error) === 422 && DRAFTS_UNSUPPORTED.test(githubMessage(error))) return create(false);
      throw error;
    });
  } catch (error) {
    // Another worker opened it between our list and create: update that one instead.
    if (httpStatus(error) === 422) {
      const raced = await findOpenPullRequest(api, input);
      if (raced) return update(raced.number);
    }
    const status = httpStatus(error);
    throw new GitHubError(`Could not open the pull request for ${input.branch}: ${githubMessage(error)}`, {
      code: "pull_request_failed",
      retryable: status === undefined || status >= 500 || status === 429,
      cause: error,
    });
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
  return (await reviewRefusal(api, repo, pullNumber, login)) === null;
}

/** Requests review from `login`; null when requested, else GitHub's reason for refusing (its 422). */
export async function reviewRefusal(
  api: GitHubApi,
  repo: RepoRef,
  pullNumber: number,
  login: string,
): Promise<string | null> {
  try {
    await api.rest.pulls.requestReviewers({ ...repo, pull_number: pullNumber, reviewers: [login] });
    return null;
  } catch (error) {
    if (httpStatus(error) === 422) return githubMessage(error);
    throw error;
  }
}
