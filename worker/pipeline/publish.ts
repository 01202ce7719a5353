import type { Trajectory } from "../../src/contracts.js";
import {
  createStatusComment,
  type GitHubApi,
  openOrUpdatePullRequest,
  renderPullRequestBody,
  renderTrajectorySummary,
  requestReview,
  type StatusView,
  updateStatusComment,
} from "../../src/github/index.js";
import { analyseTestChanges } from "../../src/github/test-changes.js";
import type { FixJobData } from "../../src/queue/index.js";
import type { Publisher, PullRequestDraft, StatusReporter } from "./run.js";

/** GitHub's API as the worker uses it: the helpers' subset plus posting a comment on the pull request. */
export type WorkerGitHubApi = GitHubApi;

/**
 * The status comment of a job on its issue, edited in place (created here when the webhook side
 * could not, e.g. a job enqueued by hand). `trajectoryUrl` links the full trajectory when served.
 */
export function githubStatusReporter(
  api: WorkerGitHubApi,
  job: FixJobData,
  options: {
    trajectoryUrl?: string;
    /** Whether the run has written its trajectory yet: a run that wrote none links none. */
    trajectoryWritten?: () => boolean;
    testsBefore?: () => boolean | undefined;
  } = {},
): StatusReporter {
  const repo = { owner: job.owner, repo: job.repo };
  const link = () =>
    options.trajectoryUrl && (options.trajectoryWritten?.() ?? true) ? options.trajectoryUrl : undefined;
  const contextNow = () => {
    const trajectoryUrl = link();
    return { requestedBy: job.requestedBy, ...(trajectoryUrl ? { trajectoryUrl } : {}) };
  };
  let commentId = job.statusCommentId;
  let queue = Promise.resolve();
  // Updates go out one at a time in call order, so a slow request can never land after a later one.
  const show = (view: StatusView): Promise<void> => {
    const next = queue.then(async () => {
      const context = contextNow();
      if (commentId === undefined) {
        commentId = await createStatusComment(api, { ...repo, issueNumber: job.issueNumber }, view, context);
      } else {
        await updateStatusComment(api, repo, commentId, view, context);
      }
    });
    queue = next.catch(() => {});
    return next;
  };
  return {
    progress: (phase, info = {}) =>
      show({
        kind: "progress",
        phase,
        ...(info.step !== undefined ? { step: info.step } : {}),
        ...(info.maxSteps !== undefined ? { maxSteps: info.maxSteps } : {}),
        ...(info.note ? { detail: info.note } : {}),
      }),
    succeeded: (pullRequest) =>
      show({
        kind: "succeeded",
        pullRequest,
        // A review run adds a commit to the pull request it was asked on; it opens none.
        ...(job.trigger === "review" ? { review: true } : {}),
      }),
    failed: (reason, trajectory) =>
      show({
        kind: "failed",
        reason,
        ...(trajectory ? { summary: summaryOf(trajectory, options.testsBefore?.(), link()) } : {}),
      }),
    cancelled: (by) => show({ kind: "cancelled", by }),
  };
}

function summaryOf(trajectory: Trajectory, testsBefore: boolean | undefined, trajectoryUrl?: string): string {
  // Inside the status comment, which has its own header: leave room for it.
  return renderTrajectorySummary(trajectory, {
    ...(testsBefore === undefined ? {} : { testsBefore }),
    ...(trajectoryUrl ? { trajectoryUrl } : {}),
    limit: 60_000,
  });
}

/** The agent's own account of its change: the thought that went with its final submit. */
export function finalMessage(trajectory: Trajectory): string {
  const steps = trajectory.trajectory;
  for (let i = steps.length - 1; i >= 0; i--) {
    const thought = steps[i]?.thought.trim();
    if (thought) return thought;
  }
  return "";
}

/** Step 7's GitHub writes: one draft pull request per issue, the review request, the summary. */
export function githubPublisher(
  api: WorkerGitHubApi,
  job: FixJobData,
  options: { trajectoryUrl?: string } = {},
): Publisher {
  const repo = { owner: job.owner, repo: job.repo };
  const link = options.trajectoryUrl ? { trajectoryUrl: options.trajectoryUrl } : {};
  const body = (draft: PullRequestDraft) =>
    renderPullRequestBody({
      issueNumber: draft.issueNumber,
      summary: finalMessage(draft.trajectory),
      testCommand: draft.testCommand,
      baselinePassed: draft.baseline.passed,
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
              failedBefore: !draft.proof.before.passed,
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
      return { number: pr.number, url: pr.url };
    },
    async requestReview(pullNumber, login) {
      await requestReview(api, repo, pullNumber, login);
    },
    async postSummary(pullNumber, draft) {
      await api.rest.issues.createComment({
        ...repo,
        issue_number: pullNumber,
        body: renderTrajectorySummary(draft.trajectory, {
          testsBefore: draft.baseline.passed,
          testsAfter: true,
          ...link,
        }),
      });
    },
  };
}
