/**
 * The model cost of every run on one of the app's pull requests, added up across its runs: the run that
 * opened it and each review, CI and rebase round on it. Each run is held to its own cost ceiling, but
 * rounds on the same pull request would add up without bound; the worker refuses a new round once this
 * total reaches the operator's `quotas.maxCostUsdPerPullRequest`, and `/agent-fix status` shows it.
 * Kept in Redis by repository id and pull request number, beside the pull request's CI round keys.
 */
import type { Redis } from "ioredis";
import { pullCostKey, type QueueNames } from "./keys.js";

/** Longer than a pull request is worked on; every addition renews it. */
const TTL_S = 90 * 24 * 60 * 60;

export interface PullRequestCosts {
  /** Adds a model call's (or a whole run's) cost to the pull request's total. */
  add(repoId: number, pullNumber: number, usd: number): Promise<void>;
  /** The pull request's total so far, in USD (0 when none was counted). */
  total(repoId: number, pullNumber: number): Promise<number>;
  /** Whether the ceiling is to be said on the pull request now: true once, false every later time. */
  sayCeilingOnce(repoId: number, pullNumber: number): Promise<boolean>;
}

export function pullRequestCosts(redis: Redis, names: QueueNames): PullRequestCosts {
  const key = (repoId: number, pullNumber: number) => pullCostKey(names, repoId, pullNumber);
  return {
    async add(repoId, pullNumber, usd) {
      if (!(usd > 0)) return;
      const at = key(repoId, pullNumber);
      await redis.multi().hincrbyfloat(at, "usd", usd).expire(at, TTL_S).exec();
    },
    async total(repoId, pullNumber) {
      return Number((await redis.hget(key(repoId, pullNumber), "usd")) ?? 0);
    },
    async sayCeilingOnce(repoId, pullNumber) {
      const at = key(repoId, pullNumber);
      const [[, said]] = (await redis.multi().hsetnx(at, "ceilingSaid", "1").expire(at, TTL_S).exec()) as [
        [Error | null, number],
      ];
      return said === 1;
    },
  };
}
