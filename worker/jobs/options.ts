/** The options and handle of the BullMQ worker over the fix queue (worker/jobs/start.ts). */
import type { Job, Worker } from "bullmq";
import type { FixJobData } from "../../src/shared/queue/index.js";
import type { Logger } from "../log.js";
import type { RunEnd } from "../run-end.js";
import type { RunAdmission } from "./admission.js";
import type { BaseMoveOptions } from "./base-moves.js";
import type { FinalizeAbandoned } from "./run-records.js";

/**
 * The run of one job. `signal` aborts with a CancelReason (src/shared/errors.ts): cancelled by a person, this
 * worker shutting down, or its lock lost. `finishing`: the run's outcome is reported and only cleanup is
 * left (a shutdown waits for it). A thrown error is BullMQ's to handle (retried while attempts are left).
 */
export type FixJobProcessor = (
  job: Job<FixJobData>,
  signal: AbortSignal,
  finishing: () => void,
) => Promise<RunEnd>;

export interface FixWorkerOptions {
  redisUrl: string;
  queueName?: string;
  prefix?: string;
  /** Jobs run at once by this process; each holds one sandbox. */
  concurrency?: number;
  /** How long a lock lives without renewal (renewed every half): the time before a dead worker's job moves on. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Times a job may lose its worker and start again before it fails for good (default 1: the second death fails it). */
  maxStalledCount?: number;
  process: FixJobProcessor;
  /** Leaves the status comment of a job that ended with no processor to report final. */
  onAbandoned?: FinalizeAbandoned;
  /** A job removed from the queue while it waited (a cancel): ends what an earlier attempt left in progress. */
  onRemoved?: (jobId: string) => Promise<void>;
  /** Removes sandboxes left behind by dead workers; run at start and every `reaperIntervalMs`. */
  reap?: () => Promise<unknown>;
  reaperIntervalMs?: number;
  /** Default: a worker logger of its own (the composition root passes the process's). */
  logger?: Logger;
  /** Per-installation runs at once, budgets and daily runs (admission.ts); none: every job runs. */
  admission?: RunAdmission;
  /** Looks at the app's pull requests after their base moved (base-moves.ts); none: this process takes none. */
  baseMoves?: BaseMoveOptions;
}

export interface FixWorker {
  readonly worker: Worker<FixJobData>;
  /** Jobs this process is running now. */
  activeJobs(): string[];
  /** Stop taking jobs, wait up to `graceMs` for the running ones, hand what is left back to the queue, close. */
  shutdown(graceMs: number): Promise<void>;
}

/** The jobs this process holds: each one's run, and those whose outcome is reported. */
export interface HeldJobs {
  running: Map<string, Promise<unknown>>;
  finishing: Set<string>;
}
