/**
 * The BullMQ queue of fix jobs and the one way to add to it. One job id per issue means a run that is
 * queued or running is never started twice, whatever arrives (redeliveries, label toggles, comments).
 */
import { type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { fairPriority } from "./fair-order.js";
import { FIX_JOB_NAME, type FixJobData, fixJobDataSchema, fixJobId } from "./job.js";
import { cancelChannel, cancelFlagKey, claimKey } from "./keys.js";

export const DEFAULT_QUEUE_NAME = "agent-fix";
export const DEFAULT_QUEUE_PREFIX = "agent-fix";

const DAY_S = 24 * 60 * 60;

/** Retries are for transient failures only: the processor turns others into UnrecoverableError. */
const defaultFixJobOptions: JobsOptions = {
  attempts: 3,
  backoff: { type: "exponential", delay: 30_000 },
  removeOnComplete: { age: 7 * DAY_S, count: 1_000 },
  removeOnFail: { age: 30 * DAY_S, count: 5_000 },
};

export interface FixQueue {
  readonly queue: Queue<FixJobData>;
  /** The producer connection, also used for claims, cancel flags and the cancel channel. */
  readonly redis: Redis;
  readonly name: string;
  readonly prefix: string;
  /** Channel every worker subscribes to for cancellations. */
  readonly cancelChannel: string;
  close(): Promise<void>;
}

interface FixQueueOptions {
  name?: string;
  prefix?: string;
  jobOptions?: JobsOptions;
}

/** Wraps an already connected Redis client; the caller owns (and quits) the client. */
export function createFixQueue(redis: Redis, options: FixQueueOptions = {}): FixQueue {
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  const queue = new Queue<FixJobData>(name, {
    connection: redis,
    prefix,
    defaultJobOptions: { ...defaultFixJobOptions, ...options.jobOptions },
  });
  // Its errors are those of `redis`, logged where that was connected (connectRedis); without a
  // listener an 'error' event would crash the process.
  queue.on("error", () => {});
  return {
    queue,
    redis,
    name,
    prefix,
    cancelChannel: cancelChannel({ prefix, name }),
    close: () => queue.close(),
  };
}

/** States in which a job counts as "a run queued or running". */
const LIVE_STATES = new Set(["active", "waiting", "delayed", "prioritized", "waiting-children"]);

export type EnqueueResult =
  | { status: "queued"; jobId: string; data: FixJobData }
  | { status: "duplicate"; jobId: string; state: string };

/**
 * Adds a fix job unless one is queued or running for the issue. `prepare` runs only when this call
 * wins the start (e.g. to create the status comment) and may add fields to the job data.
 */
export async function enqueueFix(
  fixQueue: FixQueue,
  input: FixJobData,
  prepare?: (jobId: string) => Promise<Partial<FixJobData>>,
): Promise<EnqueueResult> {
  const data = fixJobDataSchema.parse(input);
  // Review runs share the issue's id: they work on the same branch as the issue's run.
  const jobId = fixJobId(data.repoId, data.issueNumber);
  // Only one caller gets past this point per issue at a time (concurrent redeliveries); the job's state
  // is read once, under the claim, where no other start can change it.
  const claim = claimKey(fixQueue, jobId);
  const claimed = await fixQueue.redis.set(claim, data.deliveryId, "PX", 30_000, "NX");
  if (claimed !== "OK") return { status: "duplicate", jobId, state: "starting" };
  try {
    const state = await fixQueue.queue.getJobState(jobId);
    const live = await liveState(fixQueue, jobId, state);
    if (live) return { status: "duplicate", jobId, state: live };
    // A finished job keeps its id for a while (removeOnComplete age): clear it so the issue can run again.
    // Fails only for a job that turned active meanwhile (locked): add() then leaves that live job be.
    await Promise.all([
      state === "unknown" ? undefined : fixQueue.queue.remove(jobId).catch(() => {}),
      fixQueue.redis.del(cancelFlagKey(fixQueue, jobId)),
    ]);
    const extra = prepare ? await prepare(jobId) : {};
    const full = fixJobDataSchema.parse({ ...data, ...extra });
    // Fair between installations: ranked behind the installation's own runs queued or running. Taken
    // just before the add, under the claim, which keeps this id counted by others ranked meanwhile.
    const priority = await fairPriority(fixQueue.redis, fixQueue, full.installationId, jobId);
    await fixQueue.queue.add(FIX_JOB_NAME, full, { jobId, ...(priority > 0 ? { priority } : {}) });
    return { status: "queued", jobId, data: full };
  } finally {
    await fixQueue.redis.del(claim);
  }
}

/** The state of a queued or running job ("cancelling" when told to stop); null if none is. */
async function liveState(fixQueue: FixQueue, jobId: string, state: string): Promise<string | null> {
  if (!LIVE_STATES.has(state)) return null;
  // A run that was told to stop but has not ended yet cannot be restarted under the same id.
  if (state === "active" && (await fixQueue.redis.exists(cancelFlagKey(fixQueue, jobId))) === 1)
    return "cancelling";
  return state;
}
