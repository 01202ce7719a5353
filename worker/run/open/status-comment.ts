/**
 * The job's status comment on its issue, edited in place from the run's first step to its last: every run
 * ends in exactly one final update (succeeded, failed or cancelled), written here.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Trajectory } from "../../../src/shared/contracts.js";
import type { BaselineFailure } from "../../../src/shared/github/baseline-failure.js";
import {
  createStatusComment,
  type GitHubApi,
  type StatusView,
  updateStatusComment,
} from "../../../src/shared/github/index.js";
import type { LinkPolicy } from "../../../src/shared/github/inert-links.js";
import type { LeftWork } from "../../../src/shared/github/left-work.js";
import type { FixJobData } from "../../../src/shared/queue/index.js";
import { githubMessage } from "../../github/pull-request.js";
import { renderTrajectorySummary } from "../../github/summary.js";
import { createWorkerLogger, type Logger } from "../../log.js";
import type { PublishedPullRequest } from "../publish/github-publisher.js";

/** What a rebase round did to the app's pull request, as the status says it. */
export interface KeptUp {
  /** E.g. "merged `main` into pull request #3". */
  done: string;
  /** Whether the repository's tests ran on the result. */
  tested: boolean;
}

export type RunPhase = "queued" | "cloning" | "setting_up" | "agent" | "testing" | "publishing";

/** What a failed run's status shows beside its reason. */
export interface FailureDetails {
  /** The agent's trajectory, summarised. */
  trajectory?: Trajectory | null | undefined;
  /** Whether the tests passed before any change (the summary's "Tests before"); undefined: not run. */
  testsBefore?: boolean | undefined;
  /** The change the agent left when it stopped on a limit, with its tests' result. */
  work?: LeftWork | undefined;
  /** The tests that failed before any change and stopped the run, with what the agent had spent. */
  baseline?: BaselineFailure | undefined;
}

export interface ProgressInfo {
  step?: number;
  maxSteps?: number;
  /** One line for people, e.g. why a retry is coming. */
  note?: string;
}

/** The status comment on the issue, edited in place. Every run ends in exactly one final call. */
export interface StatusReporter {
  /** Rejects when the edit failed, which the reporter has logged; callers go on (progressIsBestEffort). */
  progress(phase: RunPhase, info?: ProgressInfo): Promise<void>;
  /** `keptUp`: a rebase round's account of what it did to the pull request (the status says it instead). */
  succeeded(pullRequest: PublishedPullRequest, keptUp?: KeptUp): Promise<void>;
  failed(reason: string, details?: FailureDetails): Promise<void>;
  cancelled(by: string): Promise<void>;
  /** Where the run's settings came from (detected commands, organisation defaults): kept in every later update. */
  configured(note: string): void;
  /**
   * That the run starts from a branch holding people's commits, not the default branch: shown from the
   * next update on, beside the config's note (which `configured` replaces; this one stays), final ones too.
   */
  startsFrom(note: string): void;
}

/** The catch of a progress update: a progress line is best effort, and the reporter logs its failure. */
export function progressIsBestEffort(): void {}

/** Attempts at the final status edit before a new comment carries it instead. */
const FINAL_EDIT_ATTEMPTS = 3;

/** GitHub's API as the worker uses it: the helpers' subset plus posting a comment on the pull request. */
export type WorkerGitHubApi = GitHubApi;

/**
 * The status comment of a job on its issue, edited in place (created here when the webhook side
 * could not, e.g. a job enqueued by hand). `trajectoryUrl` links the full trajectory when served.
 */
export function githubStatusReporter(
  api: WorkerGitHubApi,
  job: FixJobData,
  options: StatusReporterOptions = {},
): StatusReporter {
  const logger = options.logger ?? createWorkerLogger();
  const comment = statusComment(api, job, options, logger);
  const show = comment.show;
  return {
    progress: (phase, info = {}) =>
      show({
        kind: "progress",
        phase,
        ...(info.step !== undefined ? { step: info.step } : {}),
        ...(info.maxSteps !== undefined ? { maxSteps: info.maxSteps } : {}),
        ...(info.note ? { detail: info.note } : {}),
      }).catch((error: unknown) => {
        logger.warn(`status comment progress (${phase}) not written: ${githubMessage(error)}`);
        throw error;
      }),
    succeeded: ({ number, url, ...published }: PublishedPullRequest, keptUp?: KeptUp) =>
      show({
        kind: "succeeded",
        pullRequest: { number, url },
        ...(published.draft === false ? { draft: false } : {}),
        ...(published.reviewRequested === false ? { reviewRequested: false } : {}),
        ...(published.reviewers?.length ? { reviewers: published.reviewers } : {}),
        ...(published.problems?.length ? { problems: published.problems } : {}),
        // A review run adds a commit to the pull request it was asked on; it opens none.
        ...(job.trigger === "review" ? { review: true } : {}),
        // A CI round too, for the checks that failed; nobody asked it for a review.
        ...(job.trigger === "ci" ? { ci: true } : {}),
        // A rebase round's conflicts resolved by the agent, tested and pushed by the fix run's publish step.
        ...(job.trigger === "rebase"
          ? {
              keptUp: keptUp ?? {
                done: `resolved the conflicts with its base branch in a merge commit on pull request #${number}`,
                tested: true,
              },
            }
          : {}),
      }),
    failed: (reason, { trajectory, testsBefore, work, baseline } = {}) =>
      show({
        kind: "failed",
        reason,
        // The summary links no trajectory: the status comment links it once, at its end.
        ...(trajectory
          ? {
              summary: summaryOf(
                trajectory,
                testsBefore,
                work ? SUMMARY_BESIDE_WORK : undefined,
                options.links,
              ),
            }
          : {}),
        ...(work ? { work } : {}),
        ...(baseline ? { baseline } : {}),
      }),
    cancelled: (by) => show({ kind: "cancelled", by }),
    configured: (note) => comment.configured(note),
    startsFrom: (note) => comment.startsFrom(note),
  };
}

interface StatusReporterOptions {
  trajectoryUrl?: string;
  /** Hosts the model's text may link to or show images from; default github.com only. */
  links?: LinkPolicy;
  /** Whether the run has written its trajectory yet: a run that wrote none links none. */
  trajectoryWritten?: () => boolean;
  /** The job's logger: failed edits of the final status are logged. */
  logger?: Logger;
}

/**
 * The job's one status comment: `show` writes a view of it, `configured` adds the config's note,
 * `startsFrom` the branch the run builds on.
 */
function statusComment(
  api: WorkerGitHubApi,
  job: FixJobData,
  options: StatusReporterOptions,
  logger: Logger,
) {
  const repo = { owner: job.owner, repo: job.repo };
  const link = () =>
    options.trajectoryUrl && (options.trajectoryWritten?.() ?? true) ? options.trajectoryUrl : undefined;
  const contextNow = () => {
    const trajectoryUrl = link();
    return {
      requestedBy: job.requestedBy,
      ...(trajectoryUrl ? { trajectoryUrl } : {}),
      ...(configNote ? { configNote } : {}),
      ...(startNote ? { startNote } : {}),
      ...(options.links ? { links: options.links } : {}),
    };
  };
  const issue = { ...repo, issueNumber: job.issueNumber };
  let commentId = job.statusCommentId;
  let configNote: string | undefined;
  let startNote: string | undefined;
  let queue = Promise.resolve();
  // Updates go out one at a time in call order, so a slow request can never land after a later one.
  const show = (view: StatusView): Promise<void> => {
    const next = queue.then(async () => {
      const context = contextNow();
      if (commentId === undefined) {
        commentId = await createStatusComment(api, issue, view, context);
      } else if (view.kind === "progress") {
        await updateStatusComment(api, repo, commentId, view, context);
      } else if (
        !(await editWithRetries(() => updateStatusComment(api, repo, commentId ?? 0, view, context), logger))
      ) {
        // The comment cannot be edited (e.g. 403 on every edit): the final status must still show.
        commentId = await createStatusComment(api, issue, view, context);
      }
    });
    // The caller gets the failure through `next`; the chain only has to keep going.
    queue = next.catch(() => {});
    return next;
  };
  const configured = (note: string) => {
    configNote = note;
  };
  const startsFrom = (note: string) => {
    startNote = note;
  };
  return { show, configured, startsFrom };
}

/** Whether `edit` succeeded within a few attempts (1 s, then 2 s apart). */
async function editWithRetries(edit: () => Promise<void>, logger: Logger): Promise<boolean> {
  for (let attempt = 1; attempt <= FINAL_EDIT_ATTEMPTS; attempt++) {
    try {
      await edit();
      return true;
    } catch (error) {
      logger?.warn(
        `status comment edit ${attempt} of ${FINAL_EDIT_ATTEMPTS} failed: ${githubMessage(error)}`,
      );
      if (attempt < FINAL_EDIT_ATTEMPTS) await sleep(attempt * 1000);
    }
  }
  return false;
}

/** The summary's room beside unfinished work: the diff gets what is left of the comment. */
const SUMMARY_BESIDE_WORK = 16_000;

function summaryOf(
  trajectory: Trajectory,
  testsBefore: boolean | undefined,
  limit = 60_000,
  links?: LinkPolicy,
): string {
  // Inside the status comment, which has its own header: leave room for it.
  return renderTrajectorySummary(trajectory, {
    ...(testsBefore === undefined ? {} : { testsBefore }),
    limit,
    ...(links ? { links } : {}),
  });
}
