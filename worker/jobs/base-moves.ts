/**
 * The looks at the app's pull requests after their base branch moved (src/shared/queue/base-moves.ts),
 * taken beside the fix jobs: each asks GitHub whether the pull request conflicts now (`look`, given by the
 * composition root) and, when the operator set `worker.keepUp.whenConflicting`, queues a rebase round for
 * it (keep-up-round.ts) on the fix queue, where the job id keeps it from starting beside a run of
 * the issue. A look that finds GitHub still computing is retried with the queue's backoff; one that finds
 * nothing to do ends quietly.
 */
import { Worker } from "bullmq";
import type { Redis } from "ioredis";
import { type BaseMove, baseMoveQueueNames, baseMoveSchema } from "../../src/shared/queue/base-moves.js";
import type { FixQueue, QueueNames } from "../../src/shared/queue/index.js";
import type { Logger } from "../log.js";
import { startBaseMoveRound } from "./keep-up-round.js";

/** What GitHub says of the pull request: its mergeability, or that it is no longer one to bring up to date. */
export type PullMergeability = "conflicting" | "pending" | "mergeable" | "gone";

export interface BaseMoveOptions {
  /** The operator's `worker.keepUp.whenConflicting`: without it a look reads nothing and queues nothing. */
  whenConflicting: boolean;
  look(move: BaseMove): Promise<PullMergeability>;
  /** The app's bot login, `SLUG[bot]`: nobody asked for the round, the app starts it. */
  appLogin: string;
}

/** Looks at once: each is one API call, so a few share a process without holding a run's slot. */
const CONCURRENCY = 4;

export function startBaseMoveWorker(
  connection: Redis,
  fix: QueueNames,
  producer: FixQueue,
  options: BaseMoveOptions,
  logger: Logger,
): Worker<BaseMove> {
  const { prefix, name } = baseMoveQueueNames(fix);
  const worker = new Worker<BaseMove>(
    name,
    async (job) => {
      const move = baseMoveSchema.parse(job.data);
      if (!options.whenConflicting) return "off";
      const now = await options.look(move);
      // Thrown to be looked at again after the queue's backoff: GitHub computes it in the background.
      if (now === "pending")
        throw new Error(`GitHub has not computed yet whether pull request #${move.pullNumber} conflicts`);
      if (now !== "conflicting") return now;
      const started = await startBaseMoveRound(producer, move, options.appLogin);
      const log = logger.child({ pull: move.pullNumber, base: move.base, sha: move.baseSha });
      // A run of the issue queued or running: it is never joined by a round; what it pushes is looked at after.
      if (started.status === "duplicate") {
        log.info(
          { state: started.state },
          "the base moved and the pull request conflicts, but a run of it is in flight",
        );
        return "in flight";
      }
      log.info(
        { jobId: started.jobId },
        "the base moved and the pull request conflicts: a rebase round queued",
      );
      return "round queued";
    },
    { connection: connection as never, prefix, concurrency: CONCURRENCY },
  );
  worker.on("error", (err) => logger.error({ err }, "base-move worker error"));
  worker.on("failed", (job, error) => {
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1))
      logger.warn({ pull: job.data.pullNumber, err: error }, "the look after the base moved gave up");
  });
  return worker;
}
