/**
 * The figures a fault test measures (outcome, time to recover, retries used), printed one line each
 * with a common prefix so the closing note can collect them from the test output.
 */
import type { Stack } from "../support/stack.js";
import type { IssueRef } from "../support/stack-parts.js";

interface FaultFigure {
  fault: string;
  outcome: string;
  /** From the fault's end (service back) to the final status. */
  recoverMs: number;
  /** Job attempts after the first (BullMQ retries). */
  jobRetries: number;
  /** Anything else worth a column (client retries, waits). */
  detail?: string;
}

export function reportFigure(figure: FaultFigure): void {
  const seconds = (figure.recoverMs / 1000).toFixed(1);
  console.log(
    `[fault-figure] ${figure.fault} | ${figure.outcome} | recovered in ${seconds} s | job retries ${figure.jobRetries}` +
      (figure.detail ? ` | ${figure.detail}` : ""),
  );
}

/** The fix job id of an issue (one job per issue, src/shared/queue/job.ts). */
export const fixJobIdOf = (issue: IssueRef) => `fix-${issue.repoId}-${issue.number}`;

/** BullMQ's attempts of the issue's job after the first, read from the queue. */
export async function jobRetries(stack: Stack, issue: IssueRef): Promise<number> {
  const job = await stack.app?.queue.queue.getJob(fixJobIdOf(issue));
  return Math.max(0, (job?.attemptsMade ?? 1) - 1);
}
