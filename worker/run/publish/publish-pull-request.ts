/**
 * The run's publish step, after the push: the pull request, then the review request, the summary and
 * the app's check run beside it. Once the pull request is open nothing fails the run; what did not work is named in the
 * final status.
 */
import { AgentFixError, CancelledError, type CancelReason } from "../../../src/shared/errors.js";
import { githubMessage } from "../../github/pull-request.js";
import { createWorkerLogger, type Logger } from "../../log.js";
import type { StatusReporter } from "../open/status-comment.js";
import type { CheckRun } from "./check-run.js";
import type { PublishedPullRequest, Publisher, PullRequestDraft } from "./github-publisher.js";

/**
 * Opens (or updates) the pull request, then requests review and posts the
 * summary. Once the pull request is open nothing makes the run fail: what did not work is named in
 * the final status beside the pull request.
 */
export async function publishPullRequest(input: {
  publisher: Publisher;
  status: StatusReporter;
  draft: PullRequestDraft;
  requestedBy: string;
  /** The app's check run on the pushed commit: completed here, with success or the reason it failed. */
  check?: CheckRun | undefined;
  /**
   * A cancel of the run that came by now (the issue closed or unlabelled, `/agent-fix stop`): honoured
   * until the pull request opens, so a cancelled run opens none; its check run is ended by the run's end.
   */
  cancelled?: (() => Promise<CancelReason | null>) | undefined;
  logger?: Logger | undefined;
}): Promise<PublishedPullRequest> {
  const { publisher, draft, requestedBy, check } = input;
  const cancel = await input.cancelled?.();
  if (cancel) throw new CancelledError("cancelled before the pull request was published", cancel);
  const opened = await publisher.openOrUpdatePullRequest(draft).catch(async (error: unknown) => {
    // The commit is pushed but the run fails here: its check run says so, with the reason.
    await check?.complete("failure", reasonOf(error));
    throw error;
  });
  const failure = (what: string) => (error: unknown) => `${what}: ${reasonOf(error)}`;
  const [review, summary, checked] = await Promise.all([
    publisher.requestReview(opened.number, requestedBy, draft).then(
      (request) => ({ ...request, refused: null }),
      (error: unknown) => ({
        owners: [],
        problems: [],
        refused: failure(`Review could not be requested from @${requestedBy}`)(error),
      }),
    ),
    publisher
      .postSummary(opened.number, draft)
      .then(() => null, failure("The trajectory summary could not be posted on the pull request")),
    check?.complete("success") ?? null,
  ]);
  const problems = [review.refused, ...review.problems, summary, checked].filter(
    (problem): problem is string => problem !== null,
  );
  const published: PublishedPullRequest = {
    ...opened,
    ...(review.refused ? { reviewRequested: false } : {}),
    ...(review.owners.length ? { reviewers: review.owners } : {}),
    ...(problems.length ? { problems } : {}),
  };
  await input.status.succeeded(published).catch((error: unknown) => {
    // The pull request is open: a status that cannot be written is logged, not the run's outcome.
    (input.logger ?? createWorkerLogger()).error(
      `the final status of pull request #${opened.number} could not be written: ${reasonOf(error)}`,
    );
  });
  return published;
}

function reasonOf(error: unknown): string {
  const text = error instanceof AgentFixError ? error.describe() : githubMessage(error);
  return text.replace(/\s+/g, " ").trim();
}

/** The publish step of a run: its task's publisher, status and requester. */
export function publish(
  run: RunCancels & { status: StatusReporter; job: { data: { requestedBy: string } }; log: Logger },
  publisher: Publisher,
  draft: PullRequestDraft,
  check?: CheckRun,
): Promise<PublishedPullRequest> {
  const { status, log: logger } = run;
  return publishPullRequest({
    publisher,
    status,
    draft,
    requestedBy: run.job.data.requestedBy,
    check,
    cancelled: () => cancelOf(run),
    logger,
  });
}

/** What of a run tells whether it was cancelled: its signal, and the cancel flag of its job in Redis. */
interface RunCancels {
  signal: AbortSignal;
  job: { id: string };
  parts: { pendingCancel(jobId: string): Promise<CancelReason | null> };
}

/**
 * The cancel of `run` that came by now: its signal aborted by a cancel (not a shutdown or a lost lock,
 * which hand the job on), or the job's cancel flag, set before the webhook that cancelled answered.
 */
export async function cancelOf(run: RunCancels): Promise<CancelReason | null> {
  const reason = run.signal.aborted ? (run.signal.reason as CancelReason) : null;
  if (reason?.kind === "cancelled") return reason;
  return run.parts.pendingCancel(run.job.id).catch(() => null);
}
