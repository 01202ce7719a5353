/**
 * The contract between the run (worker/run/) and the job's life around BullMQ (worker/jobs/): what a run
 * is given of its job, and the one value that says how it ended. Neither folder imports the other; the
 * composition root (worker/main.ts) hands the run to the jobs as their processor.
 */
import type { Trajectory } from "../src/shared/contracts.js";
import type { FixJobData } from "../src/shared/queue/index.js";

/** A job as the run sees it: plain values, no queue client. */
export interface RunJob {
  /** BullMQ's job id (one per issue or review round; a later run of the same issue reuses it). */
  id: string;
  /** When the job was created: with `id`, the key of a change kept for the job's next attempt. */
  createdAt: number;
  data: FixJobData;
  /** This attempt (1-based) and how many the job may have: a retryable error retries only while some are left. */
  attempt: { number: number; of: number };
}

export type RunStep = "clone" | "sandbox" | "setup" | "baseline" | "agent" | "tests" | "publish";

/**
 * Milliseconds spent in each step (for logs and bench/pipeline.ts), and, under `start_` keys, where the
 * time to the agent's first step went (bench/warm.ts): a warm start's prepare steps, the agent's sandbox.
 */
export type RunTimings = Partial<Record<RunStep | `start_${string}`, number>>;

/** What BullMQ keeps as a completed job's return value: what happened, and where the time went. */
export interface JobResult {
  kind: "pull_request" | "no_pull_request";
  url?: string;
  number?: number;
  reason?: string;
  exitStatus: string | null;
  timings: RunTimings;
  /**
   * The app's pull request, when GitHub reported it conflicting with its base after this run and the operator
   * wants that resolved by itself (`worker.keepUp.whenConflicting`): the job's end queues a rebase round.
   */
  conflicting?: number;
}

/** A run that ended with its status comment final and nothing left to retry. */
export type RunOutcome = { timings: RunTimings } & (
  | { kind: "pull_request"; number: number; url: string; trajectory: Trajectory | null }
  | { kind: "no_pull_request"; reason: string; trajectory: Trajectory | null }
);

/**
 * How a run ended, and so what the queue does with its job. `statusWritten` is false when the status
 * comment could not be written: whichever worker process is alive then finalizes it.
 */
export type RunEnd =
  /** A pull request, or none and why: the job completes with `result` as its return value. */
  | { kind: "completed"; result: unknown }
  /** Stopped by a person (or the issue closing): failed for good, never retried. */
  | { kind: "cancelled"; by: string; statusWritten: boolean }
  /** An error no later attempt gets past (or the job's last attempt): failed for good. */
  | { kind: "failed"; message: string; statusWritten: boolean; cause: unknown }
  /** An error a later attempt may get past; the status says a retry is coming. */
  | { kind: "retry"; error: Error }
  /** This worker is shutting down: the job goes back to the queue for another worker, its status says so. */
  | { kind: "handed_back" }
  /** This worker lost its lock on the job, which the queue gave out again: the job and status are not ours. */
  | { kind: "lock_lost" };

/** How a job ended without its processor leaving the status final: whichever worker is alive finalizes it. */
export type Abandonment =
  | { kind: "stalled"; deaths: number }
  | { kind: "removed" }
  | { kind: "failed"; message: string };

/** The job completed with `result` (a test's processor, or a run's outcome). */
export function completed(result: unknown): RunEnd {
  return { kind: "completed", result };
}
