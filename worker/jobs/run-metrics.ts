import type { Job } from "bullmq";
import { metrics, type RunOutcomeLabel } from "../../src/shared/metrics/registry.js";
import type { FixJobData } from "../../src/shared/queue/index.js";
import type { RunEnd } from "../run-end.js";

/**
 * One attempt of `job` as the metrics see it: its queue wait (first start only) now, its outcome and
 * duration once `ended` is told how it ended (null: its processor threw).
 */
export function observeRun(job: Job<FixJobData>): { ended(end: RunEnd | null): void } {
  const started = Date.now();
  if (job.attemptsMade === 0 && !job.data.handoffs) {
    const queued = job.timestamp + (job.opts.delay ?? 0);
    metrics.queueWait.observe(Math.max(0, (job.processedOn ?? started) - queued) / 1000);
  }
  return {
    ended(end) {
      const outcome = end ? outcomeOf(end) : "failed";
      metrics.runs.inc({ outcome });
      metrics.runDuration.observe({ outcome }, (Date.now() - started) / 1000);
    },
  };
}

function outcomeOf(end: RunEnd): RunOutcomeLabel {
  switch (end.kind) {
    case "completed":
      return (end.result as { kind?: unknown } | undefined)?.kind === "pull_request"
        ? "pull_request"
        : "no_pull_request";
    case "retry":
      return "retrying";
    case "handed_back":
    case "lock_lost":
      return "handed_back";
    default:
      return end.kind;
  }
}
