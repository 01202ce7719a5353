/**
 * The run's publish step, after the push: the pull request, then the review request and the
 * summary beside it. Once the pull request is open nothing fails the run; what did not work is named in the
 * final status.
 */
import { AgentFixError } from "../../../src/shared/errors.js";
import { githubMessage } from "../../github/pull-request.js";
import { createWorkerLogger, type Logger } from "../../log.js";
import type { StatusReporter } from "../open/status-comment.js";
import type { PublishedPullRequest, Publisher, PullRequestDraft } from "./github-publisher.js";

/**
 * Opens (or updates) the pull request, then requests review and posts the
 * summary. Once the pull request is open nothing makes the run fail: what did not work is named in
 * the final status beside the pull request. `alongside` is awaited before the status says done.
 */
export async function publishPullRequest(input: {
  publisher: Publisher;
  status: StatusReporter;
  draft: PullRequestDraft;
  requestedBy: string;
  alongside?: Promise<unknown>;
  logger?: Logger | undefined;
}): Promise<PublishedPullRequest> {
  const { publisher, draft, requestedBy } = input;
  const opened = await publisher.openOrUpdatePullRequest(draft);
  const failure = (what: string) => (error: unknown) => `${what}: ${reasonOf(error)}`;
  const [review, summary] = await Promise.all([
    publisher
      .requestReview(opened.number, requestedBy)
      .then(() => null, failure(`Review could not be requested from @${requestedBy}`)),
    publisher
      .postSummary(opened.number, draft)
      .then(() => null, failure("The trajectory summary could not be posted on the pull request")),
    input.alongside,
  ]);
  const problems = [review, summary].filter((problem): problem is string => problem !== null);
  const published: PublishedPullRequest = {
    ...opened,
    ...(review ? { reviewRequested: false } : {}),
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

/** The publish step of a run: its task's publisher, status and requester; `alongside` awaited before "done". */
export function publish(
  run: { status: StatusReporter; job: { data: { requestedBy: string } }; log: Logger },
  publisher: Publisher,
  draft: PullRequestDraft,
  alongside: Promise<unknown>,
): Promise<PublishedPullRequest> {
  const { status, log: logger } = run;
  return publishPullRequest({
    publisher,
    status,
    draft,
    requestedBy: run.job.data.requestedBy,
    alongside,
    logger,
  });
}
