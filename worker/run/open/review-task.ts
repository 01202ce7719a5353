/**
 * Review rounds: a maintainer asked for changes on the app's pull request.
 * The agent starts from the pull request's branch (not the default branch), its task is the issue plus the
 * review (body and line comments, read here with the installation client: the job holds ids only), the
 * result is a new commit on the same branch, and the pull request is reused, never a second one opened.
 */

import type { Trajectory } from "../../../src/shared/contracts.js";
import { AgentFixError, type PipelineErrorCode } from "../../../src/shared/errors.js";
import { fixBranch } from "../../../src/shared/fix-branch.js";
import { type GitHubApi, githubFailure } from "../../../src/shared/github/index.js";
import { GITHUB_COM_LINKS, type LinkPolicy } from "../../../src/shared/github/inert-links.js";
import { ownFixIssue } from "../../../src/shared/github/own-pull.js";
import type { Feedback, FixJobData } from "../../../src/shared/queue/index.js";
import { quotedDescription } from "../../github/quoted-description.js";
import { type Publisher, type PublisherOptions, roundPublisher } from "../publish/github-publisher.js";
import { replyInReviewThreads } from "../publish/review-replies.js";
import type { Task } from "./task.js";

interface Response<T> {
  data: T;
}
// A type, not an interface: Octokit's parameters need an index signature, which only types get implicitly.
type PullParams = {
  owner: string;
  repo: string;
  pull_number: number;
};
interface PullInfo {
  number: number;
  state: string;
  html_url: string;
  head: { ref: string; repo: { full_name: string } | null };
  user: { login: string; type?: string } | null;
}
interface ReviewInfo {
  id: number;
  body: string | null;
  html_url: string;
  user: { login: string } | null;
}
export interface ReviewLineComment {
  path: string;
  line?: number | null;
  original_line?: number | null;
  body: string;
}

/** GitHub's API as review runs use it: the helpers' subset plus reading pull requests and reviews. */
export type ReviewApi = GitHubApi & {
  rest: {
    issues: {
      getComment(params: {
        owner: string;
        repo: string;
        comment_id: number;
      }): Promise<Response<{ body?: string; user: { login: string } | null }>>;
    };
    pulls: {
      get(params: PullParams): Promise<Response<PullInfo>>;
      getReview(params: PullParams & { review_id: number }): Promise<Response<ReviewInfo>>;
      listCommentsForReview(
        params: PullParams & { review_id: number; per_page?: number; page?: number },
      ): Promise<Response<Array<ReviewLineComment & { id: number }>>>;
      createReplyForReviewComment(
        params: PullParams & { comment_id: number; body: string },
      ): Promise<unknown>;
    };
  };
};

/** What the agent is given for a review run, and where it works. */
type ReviewRunInput = { issue: Task["ask"] } & Pick<Task, "existingBranch" | "commitTitle">;

const MAX_LINE_COMMENTS = 100;
const MAX_ISSUE_CHARS = 8_000;

function reviewError(
  message: string,
  code: Extract<PipelineErrorCode, "review_job_invalid" | "pull_request_closed" | "not_fix_pull_request">,
  hint: string,
): AgentFixError {
  return new AgentFixError(message, { code, fault: "user", retryable: false, hint });
}

/**
 * Reads the pull request and the review and turns them, with the issue, into the agent's task. The
 * pull request must still be the app's own (`appLogin`, its `SLUG[bot]`, opened it on this repository).
 */
export async function loadReviewRun(
  api: ReviewApi,
  job: FixJobData,
  issue: { number: number; title: string; body: string | null },
  appLogin: string,
): Promise<ReviewRunInput> {
  const repo = { owner: job.owner, repo: job.repo };
  if (job.pullNumber === undefined) {
    throw reviewError(
      "This review job names no pull request",
      "review_job_invalid",
      "Request changes again.",
    );
  }
  const params = { ...repo, pull_number: job.pullNumber };
  const { data: pull } = await api.rest.pulls.get(params).catch((error: unknown) => {
    throw githubFailure(error, `reading pull request #${job.pullNumber}`);
  });
  const branch = fixBranch(issue.number);
  if (pull.state !== "open") {
    throw reviewError(
      `Pull request #${pull.number} was closed before the review run started`,
      "pull_request_closed",
      "Reopen it and request changes again.",
    );
  }
  if (pull.head.ref !== branch || ownFixIssue(pull, `${job.owner}/${job.repo}`, appLogin) !== issue.number) {
    throw reviewError(
      `Pull request #${pull.number} is not agent-fix's pull request for #${issue.number} (its branch is ${pull.head.ref}, opened by ${pull.user?.login ?? "unknown"})`,
      "not_fix_pull_request",
      `Review runs work only on the pull request agent-fix opened from the branch ${branch} of this repository.`,
    );
  }
  // Its own review or request, then all that came in while the issue's earlier run was queued or running.
  const items = await Promise.all(feedbackOf(job).map((item) => readFeedback(api, params, item)));
  const issueBody = issue.body ?? "";
  return {
    issue: {
      number: issue.number,
      title: issue.title,
      body:
        items.length > 1
          ? reviewsTaskBody(issueBody, pull.number, items)
          : reviewTaskBody(issueBody, pull.number, items[0]?.review ?? null, items[0]?.comments ?? []),
    },
    existingBranch: branch,
    commitTitle: `Address the review on #${pull.number}`,
  };
}

/** The feedback a review job addresses, oldest first: the job's own review or request, then those gathered. */
export function feedbackOf(job: FixJobData): Feedback[] {
  const own: Feedback[] =
    job.commentId !== undefined
      ? [{ commentId: job.commentId, by: job.requestedBy }]
      : job.reviewId !== undefined
        ? [{ reviewId: job.reviewId, by: job.requestedBy }]
        : [];
  return [...own, ...(job.feedback ?? [])];
}

interface FeedbackText {
  review: Pick<ReviewInfo, "body" | "user"> | null;
  comments: ReviewLineComment[];
}

/** A review's body and line comments, or a comment command's request (the lines after the command). */
async function readFeedback(api: ReviewApi, params: PullParams, item: Feedback): Promise<FeedbackText> {
  if (item.commentId !== undefined) {
    const { data } = await api.rest.issues
      .getComment({ owner: params.owner, repo: params.repo, comment_id: item.commentId })
      .catch((error: unknown) => {
        throw githubFailure(
          error,
          `reading comment ${item.commentId} on pull request #${params.pull_number}`,
        );
      });
    const lines = (data.body ?? "").split("\n");
    const command = lines.findIndex((line) => line.trim() !== "");
    return { review: { body: lines.slice(command + 1).join("\n"), user: data.user }, comments: [] };
  }
  if (item.reviewId === undefined) return { review: null, comments: [] };
  const reviewParams = { ...params, review_id: item.reviewId };
  const [review, comments] = await Promise.all([
    api.rest.pulls.getReview(reviewParams).then((r) => r.data),
    api.rest.pulls
      .listCommentsForReview({ ...reviewParams, per_page: MAX_LINE_COMMENTS })
      .then((r) => r.data),
  ]).catch((error: unknown) => {
    throw githubFailure(error, `reading review ${item.reviewId} of pull request #${params.pull_number}`);
  });
  return { review, comments };
}

/** Several reviews gathered into one round: the issue, then each review in the order it came. */
function reviewsTaskBody(issueBody: string, pullNumber: number, items: readonly FeedbackText[]): string {
  const [first, ...rest] = items.map((item) =>
    reviewTaskBody(issueBody, pullNumber, item.review, item.comments).split("\n"),
  );
  // The issue and the preamble come once (from the first); each review adds its own part after them.
  const preambleEnd = (first ?? []).findIndex((line) => line.startsWith("A change for this issue")) + 1;
  const lines = [...(first ?? [])];
  lines.push("", `(${items.length} reviews came in; address all of them.)`);
  for (const part of rest) lines.push("", "---", ...part.slice(preambleEnd));
  return lines.join("\n");
}

/** The issue's text followed by the review: what the agent must change on its earlier work. */
export function reviewTaskBody(
  issueBody: string,
  pullNumber: number,
  review: Pick<ReviewInfo, "body" | "user"> | null,
  comments: readonly ReviewLineComment[],
): string {
  // The agent's prompt caps the whole text (agent.issue.maxBodyChars); a long issue must not push the
  // review, which is what this run is about, past that cap.
  const issue = issueBody.trim();
  const lines = [
    issue.length > MAX_ISSUE_CHARS
      ? `${issue.slice(0, MAX_ISSUE_CHARS).trimEnd()}\n\n[The issue text was cut here to leave room for the review.]`
      : issue,
    "",
    "---",
    "",
    `A change for this issue is already committed in this repository (pull request #${pullNumber}). ` +
      "A maintainer reviewed it and asked for changes. Address the review below on top of the existing " +
      "change; keep what the review does not ask to change.",
  ];
  const who = review?.user?.login ? ` by @${review.user.login}` : "";
  if (review?.body?.trim()) lines.push("", `Review${who}:`, "", review.body.trim());
  if (comments.length > 0) {
    lines.push("", "Comments on lines of the change:");
    for (const comment of comments) {
      const line = comment.line ?? comment.original_line;
      lines.push(`- \`${comment.path}\`${line ? ` line ${line}` : ""}: ${comment.body.trim()}`);
    }
  }
  if (!review?.body?.trim() && comments.length === 0) {
    lines.push("", "The review gave no text; look at the change again and improve it.");
  }
  return lines.join("\n");
}

/**
 * The publisher of a review run: the pull request already exists (it is only looked up, never
 * opened), the reviewer's review is requested again, and beside the trajectory summary the app
 * replies to the review on the pull request.
 */
export function reviewPublisher(api: ReviewApi, job: FixJobData, options: PublisherOptions = {}): Publisher {
  const repo = { owner: job.owner, repo: job.repo };
  const links = options.links ?? GITHUB_COM_LINKS;
  return roundPublisher(api, job, options, {
    pull: () => appPullRequest(api, job, "review"),
    reply: (draft, pullUrl) => reviewReply(job, draft.branch, draft.trajectory, pullUrl, links),
    afterReply: (pullNumber, draft) =>
      replyInReviewThreads(api, { ...repo, pull_number: pullNumber }, feedbackOf(job), draft.branch),
  });
}

/** The app's pull request a round on it names, as GitHub has it now (its number and address). */
export async function appPullRequest(
  api: ReviewApi,
  job: FixJobData,
  round: string,
): Promise<{ number: number; url: string }> {
  if (job.pullNumber === undefined) throw new Error(`a ${round} job without pullNumber`);
  const { data } = await api.rest.pulls.get({
    owner: job.owner,
    repo: job.repo,
    pull_number: job.pullNumber,
  });
  return { number: data.number, url: data.html_url };
}

/** The app's answer to the review: what was pushed where, in the agent's own words. */
function reviewReply(
  job: FixJobData,
  branch: string,
  trajectory: Trajectory,
  pullUrl: string,
  links: LinkPolicy,
): string {
  const review =
    job.commentId !== undefined && pullUrl
      ? `[your request](${pullUrl}#issuecomment-${job.commentId})`
      : job.reviewId !== undefined && pullUrl
        ? `[your review](${pullUrl}#pullrequestreview-${job.reviewId})`
        : "your review";
  const gathered = job.feedback ?? [];
  const people = [...new Set([job.requestedBy, ...gathered.map((f) => f.by)])].map((login) => `@${login}`);
  const count = feedbackOf(job).length;
  const what = count > 1 ? `the ${count} reviews and requests that came in` : review;
  return [
    `${people.join(" ")} I pushed a new commit to \`${branch}\` addressing ${what}; the repository's tests pass on it.`,
    ...quotedDescription(trajectory, links),
  ].join("\n");
}
