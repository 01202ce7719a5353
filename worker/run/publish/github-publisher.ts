/**
 * The GitHub writes after the push: one draft pull request per issue, the review request, the summary.
 */

import type { Trajectory } from "../../../src/shared/contracts.js";
import { fixBranch } from "../../../src/shared/fix-branch.js";
import type { GitHubApi as WorkerGitHubApi } from "../../../src/shared/github/index.js";
import { fitComment } from "../../../src/shared/github/index.js";
import type { LinkPolicy } from "../../../src/shared/github/inert-links.js";
import type { FixJobData } from "../../../src/shared/queue/index.js";
import { renderPullRequestBody } from "../../github/pr-body.js";
import {
  findOpenPullRequest,
  githubMessage,
  openOrUpdatePullRequest,
  reviewRefusal,
} from "../../github/pull-request.js";
import { renderTrajectorySummary } from "../../github/summary.js";
import { analyseTestChanges } from "../../github/test-changes.js";
import type { ContentsApi } from "../configure/contents.js";
import type { TestProof } from "../prove/prove-tests.js";
import { patchPaths } from "../solve/gate.js";
import { baselineTestsPassed, proofFailed } from "../tests/per-test-verdict.js";
import type { TestRun } from "../tests/test-run.js";
import { type CodeOwners, ownersOf, readCodeOwners, reviewersOf } from "./code-owners.js";

/** Owners asked to review, of each kind: GitHub requests at most 15 reviewers on a pull request. */
const MAX_REVIEWERS = 15;

/** An open pull request as the status reports it: whether a draft, and what did not work after it opened. */
export interface PublishedPullRequest {
  number: number;
  url: string;
  /** false when GitHub refused a draft in this repository. */
  draft?: boolean;
  /** false when the review request failed (the reason is in `problems`). */
  reviewRequested?: boolean;
  /** The code owners review was requested from, as `@login` or `@org/team` (absent: the requester). */
  reviewers?: string[];
  problems?: string[];
}

export interface PullRequestDraft {
  issueNumber: number;
  testCommand: string;
  branch: string;
  base: string;
  title: string;
  trajectory: Trajectory;
  baseline: TestRun;
  proof: TestProof;
}

/** Whom review was requested from: code owners (empty: the person who started the run), and who not. */
export interface ReviewRequest {
  owners: string[];
  problems: string[];
}

/** GitHub writes after the push: one draft PR per issue, the review request, the summary. */
export interface Publisher {
  /**
   * Starts the reads the publish needs that nothing pushed changes (the branch's open pull request, the
   * CODEOWNERS file), so they go while the change is pushed; optional, the publish reads them otherwise.
   */
  readAhead?(draft: PullRequestDraft): void;
  openOrUpdatePullRequest(draft: PullRequestDraft): Promise<PublishedPullRequest>;
  /**
   * Requests review of `draft`'s change: from the code owners of the files it changes when the
   * repository has a CODEOWNERS file, else (or when none of them can be) from `login`, who started the
   * run. Resolves to the code owners requested (none: `login` was) and those that could not be, each
   * said in a line; rejects when no one could be.
   */
  requestReview(pullNumber: number, login: string, draft: PullRequestDraft): Promise<ReviewRequest>;
  postSummary(pullNumber: number, draft: PullRequestDraft): Promise<void>;
}

/**
 * The publish step's GitHub writes: one draft pull request per issue, the review request, the
 * summary.
 */
export interface PublisherOptions {
  trajectoryUrl?: string;
  /** Hosts the model's text may link to or show images from; default github.com only. */
  links?: LinkPolicy;
  /**
   * A client that may read the repository's contents, for its CODEOWNERS file; without it review is
   * requested from the person who started the run.
   */
  contents?: () => Promise<ContentsApi>;
}

export function githubPublisher(
  api: WorkerGitHubApi,
  job: FixJobData,
  options: PublisherOptions = {},
): Publisher {
  const repo = { owner: job.owner, repo: job.repo };
  const link = {
    ...(options.trajectoryUrl ? { trajectoryUrl: options.trajectoryUrl } : {}),
    ...(options.links ? { links: options.links } : {}),
  };
  const body = (draft: PullRequestDraft) =>
    renderPullRequestBody({
      issueNumber: draft.issueNumber,
      issueTitle: draft.title,
      // Only what the model gave as the description: never a thought it was not told is published.
      description: draft.trajectory.info.description ?? null,
      patch: draft.trajectory.info.submission ?? "",
      testCommand: draft.testCommand,
      // Per test where the runner reported them: a command failing after passing tests is not a failing baseline.
      baselinePassed: baselineTestsPassed(draft.baseline),
      gateAttempts: draft.trajectory.info.gate.length,
      model: draft.trajectory.info.model,
      ...link,
      testChanges: analyseTestChanges({
        patch: draft.trajectory.info.submission ?? "",
        testFiles: draft.proof.testFiles,
        outputBefore: draft.baseline.output,
        outputAfter: draft.trajectory.info.gate.at(-1)?.output ?? "",
      }),
      ...(draft.proof.before
        ? {
            proof: {
              testFiles: draft.proof.testFiles,
              failedBefore: proofFailed(draft.baseline, draft.proof.before),
              passedAfter: true,
            },
          }
        : {}),
    });
  /** What readAhead started, for the draft it was started for. */
  let ahead: {
    draft: PullRequestDraft;
    listed: Promise<{ number: number } | undefined>;
    codeOwners: Promise<CodeOwners | null>;
  } | null = null;
  const codeOwnersOf = (draft: PullRequestDraft) =>
    ahead?.draft === draft ? ahead.codeOwners : readCodeOwnersWith(options.contents, repo, draft.base);
  return {
    readAhead(draft) {
      const listed = findOpenPullRequest(api, { ...repo, branch: draft.branch });
      const codeOwners = readCodeOwnersWith(options.contents, repo, draft.base);
      // Awaited by the publish, whose step reports a failure; until then none is unhandled.
      listed.catch(() => {});
      codeOwners.catch(() => {});
      ahead = { draft, listed, codeOwners };
    },
    async openOrUpdatePullRequest(draft) {
      const pr = await openOrUpdatePullRequest(
        api,
        { ...repo, branch: draft.branch, base: draft.base, title: draft.title, body: body(draft) },
        ahead?.draft === draft ? ahead.listed : undefined,
      );
      return { number: pr.number, url: pr.url, draft: pr.draft };
    },
    async requestReview(pullNumber, login, draft) {
      const owners = options.contents
        ? await codeOwnersOf(draft)
            .then((file) => codeOwnersReview(api, file, repo, pullNumber, draft))
            .catch((error: unknown) => ({
              requested: [],
              problems: [`The CODEOWNERS file could not be read: ${githubMessage(error)}`],
            }))
        : null;
      if (owners?.requested.length) return { owners: owners.requested, problems: owners.problems };
      const refused = await reviewRefusal(api, repo, pullNumber, login);
      if (refused) throw new Error(`GitHub refused it: ${refused}`);
      return { owners: [], problems: owners?.problems ?? [] };
    },
    async postSummary(pullNumber, draft) {
      await api.rest.issues.createComment({
        ...repo,
        issue_number: pullNumber,
        body: fitComment(
          renderTrajectorySummary(draft.trajectory, {
            testsBefore: draft.baseline.passed,
            testsAfter: true,
            ...link,
          }),
        ),
      });
    },
  };
}

/** The CODEOWNERS file of `base` through a contents reader (its token minted on first use). */
function readCodeOwnersWith(
  contents: (() => Promise<ContentsApi>) | undefined,
  repo: { owner: string; repo: string },
  base: string,
): Promise<CodeOwners | null> {
  if (!contents) return Promise.resolve(null);
  return contents().then((reader) => readCodeOwners(reader, { ...repo, ref: base }));
}

/**
 * Review requested from the code owners of the change's files, one by one (GitHub refuses a whole request
 * for one owner who is not a collaborator); null when the repository has no CODEOWNERS file or it names
 * no owner of these files. `requested`: who was.
 */
async function codeOwnersReview(
  api: WorkerGitHubApi,
  file: CodeOwners | null,
  repo: { owner: string; repo: string },
  pullNumber: number,
  draft: PullRequestDraft,
): Promise<{ requested: string[]; problems: string[] } | null> {
  if (!file) return null;
  const owners = ownersOf(file.rules, patchPaths(draft.trajectory.info.submission ?? ""));
  if (owners.length === 0) return null;
  const reviewers = reviewersOf(owners, repo.owner);
  const problems = reviewers.unrequestable.map(
    (owner) =>
      `Review could not be requested from ${owner} (${file.path}): not a GitHub user or a team of ${repo.owner}`,
  );
  const requested: string[] = [];
  const ask = async (who: string, reviewer: { reviewers?: string[]; team_reviewers?: string[] }) => {
    try {
      await api.rest.pulls.requestReviewers({ ...repo, pull_number: pullNumber, ...reviewer });
      requested.push(who);
    } catch (error) {
      problems.push(`Review could not be requested from ${who} (${file.path}): ${githubMessage(error)}`);
    }
  };
  for (const login of reviewers.users.slice(0, MAX_REVIEWERS)) await ask(`@${login}`, { reviewers: [login] });
  for (const team of reviewers.teams.slice(0, MAX_REVIEWERS))
    await ask(`@${repo.owner}/${team}`, { team_reviewers: [team] });
  return { requested, problems };
}

/** The pull request of a tested change: what its body and summary tell of it. */
export function pullRequestDraft(
  issue: { number: number; title: string; repository: { defaultBranch: string } },
  testCommand: string,
  tested: { trajectory: Trajectory; baseline: TestRun; proof: TestProof },
): PullRequestDraft {
  return {
    issueNumber: issue.number,
    testCommand,
    branch: fixBranch(issue.number),
    base: issue.repository.defaultBranch,
    title: issue.title,
    ...tested,
  };
}

/**
 * The publisher of a round on the app's pull request, already open (a review, CI or conflict round):
 * `pull` looks it up, never opens one; review is asked as an issue run asks it unless the round says
 * otherwise; beside the trajectory summary the app replies on the pull request (`reply`, given the
 * draft and the pull request's URL), then does what the round adds (`afterReply`).
 */
export function roundPublisher(
  api: WorkerGitHubApi,
  job: FixJobData,
  options: PublisherOptions,
  round: {
    pull: () => Promise<{ number: number; url: string }>;
    reply: (draft: PullRequestDraft, pullUrl: string) => string;
    requestReview?: Publisher["requestReview"];
    afterReply?: (pullNumber: number, draft: PullRequestDraft) => Promise<unknown>;
  },
): Publisher {
  const issueRun = githubPublisher(api, job, options);
  let pullUrl = "";
  return {
    async openOrUpdatePullRequest() {
      const pull = await round.pull();
      pullUrl = pull.url;
      return pull;
    },
    requestReview: round.requestReview ?? issueRun.requestReview,
    async postSummary(pullNumber, draft) {
      await issueRun.postSummary(pullNumber, draft);
      await api.rest.issues.createComment({
        owner: job.owner,
        repo: job.repo,
        issue_number: pullNumber,
        body: fitComment(round.reply(draft, pullUrl)),
      });
      await round.afterReply?.(pullNumber, draft);
    },
  };
}
