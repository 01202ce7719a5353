/**
 * A tested change that could not be published is kept with its job, so the job's next attempt only
 * publishes it (the run's publish step): the agent is not run again and the model is not paid for twice. Kept when opening the
 * pull request failed in a way a retry may fix (the change is pushed), and when the push itself did
 * (a 5xx of the git server, or the worker shutting down mid-push: the change is not pushed, and what
 * makes its commit again is kept, see push/commit-and-push.ts). Kept in Redis under the job's id and creation
 * time (a later run of the same issue reuses the job id, never the time). Never a token.
 */
import { isRetryable } from "../../../src/shared/errors.js";
import type { QueueNames } from "../../../src/shared/queue/index.js";
import { pendingPublishKey } from "../../../src/shared/queue/keys.js";
import type { UnpushedChange } from "../push/commit-and-push.js";
import type { Publisher, PullRequestDraft } from "./github-publisher.js";

/** What a job's next attempt resumes from. */
export interface KeptChange {
  /** The name of the run that tested the change: its trajectory (`RUN.traj`) is the one linked. */
  run: string;
  draft: PullRequestDraft;
  /** Set while the change is not pushed: the next attempt makes its commit again and pushes it first. */
  unpushed?: UnpushedChange | undefined;
}

import type { Logger } from "../../log.js";

/** The Redis commands the store needs. */
interface PendingPublishRedis {
  set(key: string, value: string, mode: "EX", seconds: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<unknown>;
}

/**
 * Read without removing: an attempt that stops before it is done (a shutdown, a transient error, a
 * dead worker) leaves the change for the next one. Dropped once the pull request is published.
 */
export interface PendingPublishStore {
  save(key: string, kept: KeptChange): Promise<void>;
  /** The change kept under `key` (null when there is none). */
  read(key: string): Promise<KeptChange | null>;
  drop(key: string): Promise<void>;
}

/** Longer than every backoff between a job's attempts. */
const TTL_S = 24 * 60 * 60;

export function pendingPublishes(redis: PendingPublishRedis, names: QueueNames): PendingPublishStore {
  const redisKey = (key: string) => pendingPublishKey(names, key);
  return {
    save: async (key, kept) => {
      await redis.set(redisKey(key), JSON.stringify(kept), "EX", TTL_S);
    },
    async read(key) {
      const raw = await redis.get(redisKey(key));
      if (!raw) return null;
      try {
        return keptChange(JSON.parse(raw));
      } catch {
        return null; // a kept draft that does not parse is no draft: the attempt runs anew
      }
    },
    drop: async (key) => {
      await redis.del(redisKey(key));
    },
  };
}

/** The stored value as a kept change, or null when it is not one (written by another version). */
function keptChange(value: unknown): KeptChange | null {
  const kept = value as Partial<KeptChange> | null;
  const draft = kept?.draft;
  if (typeof kept?.run !== "string" || typeof draft?.branch !== "string") return null;
  if (!Array.isArray(draft.trajectory?.trajectory)) return null;
  const unpushed = kept.unpushed;
  if (unpushed === undefined) return { run: kept.run, draft };
  const complete =
    typeof unpushed.patch === "string" &&
    typeof unpushed.baseSha === "string" &&
    typeof unpushed.baseBranch === "string" &&
    typeof unpushed.tree === "string";
  return complete ? { run: kept.run, draft, unpushed } : null;
}

/** The job's key in the store: its id and creation time. */
export function pendingRun(job: { id?: string | undefined; timestamp: number }): string {
  return `${job.id ?? ""}:${job.timestamp}`;
}

/**
 * `publisher`, keeping the pushed change's draft (of run `run`) under `key` when opening the pull
 * request fails in a way a retry may fix.
 */
export function keepForRetry(
  publisher: Publisher,
  store: PendingPublishStore,
  key: string,
  run: string,
  log?: Logger,
): Publisher {
  return {
    ...publisher,
    async openOrUpdatePullRequest(draft) {
      try {
        return await publisher.openOrUpdatePullRequest(draft);
      } catch (error) {
        if (isRetryable(error)) {
          await store.save(key, { run, draft }).catch((err: unknown) => {
            log?.warn({ err }, "the pushed change could not be kept: the job's next attempt runs anew");
          });
        }
        throw error;
      }
    },
  };
}
