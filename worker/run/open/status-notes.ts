/**
 * A rolling deploy loses no run: a worker told to stop hands the runs it could not finish back to the
 * queue (worker/jobs/job-processor.ts moves the job back to waiting), and another worker
 * starts them again. The status comment says so on both sides: "handed back" while it waits, "resumed"
 * while it runs again.
 */
import type { RunPhase, StatusReporter } from "./status-comment.js";

/** The note while a handed-back run waits; `changeKept` when its tested change waits only to be pushed and published. */
export function handedBackNote(changeKept: boolean): string {
  return (
    "The worker running this was shut down (a deploy or restart), so the run went back to the queue: " +
    (changeKept
      ? "another worker pushes and publishes the change the tests passed on, without running the agent again."
      : "another worker starts it again from the beginning.")
  );
}

function resumedNote(handoffs: number): string {
  const times = handoffs === 1 ? "" : ` (${handoffs} times)`;
  return `Resumed on another worker: the one running this before was shut down (a deploy or restart)${times}.`;
}

/** The status of a run that was handed back before: every progress line says it was resumed. */
export function resumedStatus(status: StatusReporter, handoffs: number | undefined): StatusReporter {
  if (!handoffs) return status;
  const note = resumedNote(handoffs);
  return {
    ...status,
    progress: (phase: RunPhase, info = {}) => status.progress(phase, { ...info, note: info.note ?? note }),
  };
}

/**
 * `status`, calling `finishing` as its final update begins: the run's outcome is then decided and
 * what is left is cleanup, so a worker shutting down lets it end instead of handing it back.
 */
export function finishingStatus(status: StatusReporter, finishing: (() => void) | undefined): StatusReporter {
  if (!finishing) return status;
  return {
    ...status,
    succeeded: (pullRequest, keptUp) => {
      finishing();
      return status.succeeded(pullRequest, keptUp);
    },
    failed: (reason, details) => {
      finishing();
      return status.failed(reason, details);
    },
    cancelled: (by) => {
      finishing();
      return status.cancelled(by);
    },
  };
}
