/**
 * How an error ends a run: the status comment's last word on it, and the RunEnd the queue acts on (a
 * shutdown hands the job back, a cancel and an unrecoverable error fail it for good, a retryable one is
 * retried while the job has attempts left).
 */
import { engineFault } from "../../../sandbox/docker/engine-fault.js";
import { AgentFixError, CancelledError, type CancelReason } from "../../../src/shared/errors.js";
import { neutralise } from "../../../src/shared/github/neutralise.js";
import type { Logger } from "../../log.js";
import type { RunEnd, RunJob } from "../../run-end.js";
import type { OpenRun } from "../open/open-run.js";
import { handedBackNote } from "../open/status-notes.js";
import {
  type CheckRunEnding,
  type CheckRunsApi,
  cancelledEnding,
  endLeftCheckRun,
  failedEnding,
} from "../publish/left-check-runs.js";
import { retryNote } from "./retry-note.js";

export async function runFailure(failure: unknown, run: OpenRun): Promise<RunEnd> {
  const { status, log } = run;
  // A sandbox lost to the Docker engine going away says so, and is retried.
  const error = engineFault(failure);
  const abort =
    (error instanceof CancelledError ? error.abort : null) ??
    (run.signal.aborted ? (run.signal.reason as CancelReason) : null);
  // The job went back to the queue without us (our lock lapsed): the run that takes it owns the status.
  if (abort?.kind === "lock_lost") return { kind: "lock_lost" };
  if (abort?.kind === "shutdown") {
    // Read again: this attempt may have kept its tested change just now. An unreadable store only
    // changes the note's wording, and the read of the run's start already logged why.
    const kept = run.kept ?? (await run.parts.pendingPublishes?.read(run.keptKey).catch(() => null));
    await statusWritten(() => status.progress("queued", { note: handedBackNote(Boolean(kept)) }), log);
    return { kind: "handed_back" };
  }
  if (abort) {
    // The check run first: once the status is final, nothing of the run is left in progress.
    await endCheckRun(run, cancelledEnding(abort.by, run.parts.startRules.label));
    const written = await statusWritten(() => status.cancelled(abort.by), log);
    run.afterCancel();
    return { kind: "cancelled", by: abort.by, statusWritten: written };
  }
  if (retriesLeft(error, run.job)) {
    log.warn(`retrying after ${describe(error)}`);
    const attempt = { next: run.job.attempt.number + 1, of: run.job.attempt.of };
    await statusWritten(() => status.progress("cloning", { note: retryNote(error, attempt) }), log);
    return { kind: "retry", error };
  }
  // Error messages can quote the model's diff (file names): no live mentions, keywords or links.
  const message = describe(error);
  await endCheckRun(run, failedEnding(neutralise(message, run.parts.links), run.parts.startRules.label));
  const written = await statusWritten(() => status.failed(neutralise(message, run.parts.links)), log);
  return { kind: "failed", message, statusWritten: written, cause: error };
}

/**
 * The check run this run may have left in progress, ended: no attempt follows (a retry, a hand-back or a
 * lost lock leave it to the next attempt, which ends it as it opens).
 */
export function endCheckRun(run: OpenRun, ending: CheckRunEnding): Promise<void> {
  return endLeftCheckRun(
    run.parts,
    run.job.id,
    ending,
    run.log,
    async () => (await run.credentials.checksWriter()) as unknown as CheckRunsApi,
  );
}

/** An error before the run could open (its client could not be minted): no status can be written. */
export function openFailure(error: unknown, job: RunJob): RunEnd {
  if (retriesLeft(error, job)) return { kind: "retry", error };
  return { kind: "failed", message: describe(error), statusWritten: false, cause: error };
}

/** Only an AgentFixError that says so is retried, and only while the job has attempts left. */
function retriesLeft(error: unknown, job: RunJob): error is AgentFixError {
  return error instanceof AgentFixError && error.retryable && job.attempt.number < job.attempt.of;
}

/** A status update must never hide the run's real error. Whether it was written. */
async function statusWritten(update: () => Promise<void>, log: Logger): Promise<boolean> {
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
