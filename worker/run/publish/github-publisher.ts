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
import { openOrUpdatePullRequest, reviewRefusal } from "../../github/pull-request.js";
import { renderTrajectorySummary } from "../../github/summary.js";
import { analyseTestChanges } from "../../github/test-changes.js";
import type { TestProof } from "../prove/prove-tests.js";
import { baselineTestsPassed, proofFailed } from "../tests/per-test-verdict.js";
import type { TestRun } from "../tests/test-run.js";

/** An open pull request as the status reports it: whether a draft, and what did not work after it opened. */
export interface PublishedPullRequest {
  number: number;
  url: string;
  /** false when GitHub refused a draft in this repository. */
  draft?: boolean;
  /** false when the review request failed (the reason is in `problems`). */
  reviewRequested?: boolean;
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

/** GitHub writes after the push: one draft PR per issue, the review request, the summary. */
export interface Publisher {
  openOrUpdatePullRequest(draft: PullRequestDraft): Promise<PublishedPullRequest>;
  requestReview(pullNumber: number, login: string): Promise<void>;
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
  return {
    async openOrUpdatePullRequest(draft) {
      const pr = await openOrUpdatePullRequest(api, {
        ...repo,
        branch: draft.branch,
        base: draft.base,
        title: draft.title,
        body: body(draft),
      });
      return { number: pr.number, url: pr.url, draft: pr.draft };
    },
    async requestReview(pullNumber, login) {
      const refused = await reviewRefusal(api, repo, pullNumber, login);
      if (refused) throw new Error(`GitHub refused it: ${refused}`);
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
