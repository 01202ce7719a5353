/**
 * The base branch of the app's open pull request moved (GitHub's `push` webhook on it): the webhook process
 * queues one look per pull request and base commit here, and a worker asks GitHub whether the pull request
 * now conflicts and, when the operator wants that resolved by itself (`worker.keepUp.whenConflicting`),
 * queues a rebase round on the fix queue. A queue of its own: a look is not a run (no slot, no status
 * comment, nothing said when it finds nothing), and GitHub computes mergeability after the push
 * (`mergeable` is null until it has), so a look that finds it not computed yet is retried with backoff
 * rather than holding the webhook's response or a run's slot.
 */
import { type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { z } from "zod";
import { fixJobDataSchema } from "./job.js";
import type { QueueNames } from "./keys.js";

const BASE_MOVE_JOB_NAME = "base-moved";

/** Looks at most per base commit; the waits between them double from LOOK_BACKOFF_MS (1, 2, 4, 8 s). */
const BASE_MOVE_LOOKS = 5;
const LOOK_BACKOFF_MS = 1_000;

/** A redelivered or repeated push of the same base commit looks once within this time. */
const DEDUPLICATE_MS = 24 * 60 * 60 * 1000;

export const baseMoveSchema = fixJobDataSchema
  // The fix job's own fields for the repository and issue: the rebase round is the issue's job.
  .pick({ installationId: true, accountId: true, owner: true, repo: true, repoId: true, issueNumber: true })
  .extend({
    /** The app's open pull request on the base that moved. */
    pullNumber: z.number().int().positive(),
    /** The branch that moved, the pull request's base. */
    base: z.string().min(1),
    /** The commit the base moved to (the push's `after`): one look, and one round at most, per base commit. */
    baseSha: z.string().regex(/^[0-9a-f]{40}$/),
  })
  .strict();
export type BaseMove = z.infer<typeof baseMoveSchema>;

/** The queue's name beside the fix queue's (same prefix): `<name>-base-moves`. */
export function baseMoveQueueNames(fix: QueueNames): QueueNames {
  return { prefix: fix.prefix, name: `${fix.name}-base-moves` };
}

const baseMoveJobOptions: JobsOptions = {
  attempts: BASE_MOVE_LOOKS,
  backoff: { type: "exponential", delay: LOOK_BACKOFF_MS },
  removeOnComplete: { age: 24 * 60 * 60, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 60 * 60, count: 1_000 },
};

/** Wraps an already connected Redis client (the caller owns it), as createFixQueue does. */
export function createBaseMoveQueue(redis: Redis, fix: QueueNames): Queue<BaseMove> {
  const { prefix, name } = baseMoveQueueNames(fix);
  const queue = new Queue<BaseMove>(name, {
    connection: redis,
    prefix,
    defaultJobOptions: baseMoveJobOptions,
  });
  // Its errors are those of `redis`, logged where that was connected.
  queue.on("error", () => {});
  return queue;
}

/**
 * Queues the look at one pull request after its base moved to `baseSha`. BullMQ's deduplication keeps
 * one per pull request and base commit: a redelivered push, or the same commit pushed again, adds none.
 */
export async function queueBaseMove(queue: Queue<BaseMove>, move: BaseMove): Promise<void> {
  const data = baseMoveSchema.parse(move);
  const id = `${data.repoId}-${data.pullNumber}-${data.baseSha}`;
  await queue.add(BASE_MOVE_JOB_NAME, data, { deduplication: { id, ttl: DEDUPLICATE_MS } });
}
