/**
 * How a fix job's error ends it (step 12 of docs/architecture.md): the status comment's last word on it,
 * and what BullMQ is to see (retried, failed for good, or handed back).
 */
import type { Job } from "bullmq";
import { UnrecoverableError } from "bullmq";
import { engineFault } from "../../sandbox/engine-fault.js";
import { AgentFixError, CancelledError } from "../../src/errors.js";
import { neutralise } from "../../src/github/neutralise.js";
import type { FixJobData } from "../../src/queue/index.js";
import type { Logger } from "../log.js";
import { decodeAbortReason, markCancelled } from "./cancel.js";
import { markStatusFinal } from "./final-status.js";
import type { JobContext, RunContext } from "./fix-job-context.js";
import { handedBackNote, RunHandedBack, RunLockLost } from "./handback.js";
import type { PendingPublishStore } from "./pending-publish.js";
import { retryNote } from "./retry-note.js";

/**
 * Writes the final (or retrying) status for a run's error and returns what BullMQ is to see: a shutdown
 * hands the job back, a cancel and an unrecoverable error fail it for good, a retryable one is retried.
 */
export async function reportFailure(
  failure: unknown,
  pending: PendingPublishStore | undefined,
  { job, signal, afterCancel, log }: JobContext,
  { octokit, kept, pendingKey, status, links }: RunContext,
): Promise<Error> {
  // A sandbox lost to the Docker engine going away says so, and is retried.
  const error = engineFault(failure);
  const abort =
    (error instanceof CancelledError ? error.abort : null) ??
    (signal.aborted ? decodeAbortReason(signal.reason) : null);
  // The job went back to the queue without us (our lock lapsed): the run that takes it owns the status.
  if (abort?.kind === "lock_lost") return new RunLockLost();
  if (abort?.kind === "shutdown") {
    // Not cancelled: the worker puts the job back in the queue for another worker. An unreadable store
    // only changes the note's wording, and the read above already logged why.
    const changeKept = Boolean(kept ?? (await pending?.read(pendingKey).catch(() => null)));
    await finalStatus(() => status.progress("queued", { note: handedBackNote(changeKept) }), log);
    return new RunHandedBack();
  }
  if (abort) {
    const written = await finalStatus(() => status.cancelled(abort.by), log);
    afterCancel(octokit);
    const cancelled = markCancelled(new UnrecoverableError(`cancelled by ${abort.by}`));
    return written ? markStatusFinal(cancelled) : cancelled;
  }
  const wrapped = queueError(error, job);
  if (wrapped instanceof UnrecoverableError) {
    // Unmarked when the update failed: the worker's 'failed' listener tries again.
    // Error messages can quote the model's diff (file names): no live mentions, keywords or links.
    if (await finalStatus(() => status.failed(neutralise(describe(error), links)), log))
      markStatusFinal(wrapped);
  } else {
    log.warn(`retrying after ${describe(error)}`);
    const attempt = { next: job.attemptsMade + 2, of: job.opts.attempts ?? 1 };
    await finalStatus(
      // Only an AgentFixError is retried (queueError).
      () => status.progress("cloning", { note: retryNote(error as AgentFixError, attempt) }),
      log,
    );
  }
  return wrapped;
}

/** A status update must never hide the run's real error. Whether it was written. */
async function finalStatus(update: () => Promise<void>, log: Logger): Promise<boolean> {
  return update().then(
    () => true,
    (err: unknown) => {
      log.error({ err }, "status comment update failed");
      return false;
    },
  );
}

function describe(error: unknown): string {
  if (error instanceof AgentFixError) return error.describe();
  return error instanceof Error ? error.message : String(error);
}

/** Retryable errors stay as they are while attempts remain; everything else becomes UnrecoverableError. */
export function queueError(error: unknown, job: Job<FixJobData>): Error {
  const attemptsLeft = (job.opts.attempts ?? 1) - (job.attemptsMade + 1) > 0;
  if (error instanceof AgentFixError && error.retryable && attemptsLeft) return error;
  if (error instanceof UnrecoverableError) return error;
  const wrapped = new UnrecoverableError(describe(error));
  (wrapped as Error & { cause?: unknown }).cause = error;
  return wrapped;
}
