/**
 * What installations and repositories have used, for the operator's limits: runs started per
 * repository per UTC day, and model cost per installation per UTC calendar month. A run counts once,
 * when it first starts: its retries, hand-backs and restarts after a worker died are the same run.
 */
import type { Redis } from "ioredis";
import { type QueueNames, usageRunsKey, usageSpendKey } from "./keys.js";
import { luaScript } from "./lua-script.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** `2026-12-01`: the UTC day a run started on. */
function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** `2026-12`: the UTC month a cost was spent in. */
function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** When the daily count of `at` starts again: the next midnight UTC. */
export function nextDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}

/** When the monthly budget of `at` starts again: the first of the next month, midnight UTC. */
export function nextMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

function runsKey(names: QueueNames, repoId: number, at: Date): string {
  return usageRunsKey(names, repoId, dayOf(at));
}

function spendKey(names: QueueNames, installationId: number, at: Date): string {
  return usageSpendKey(names, installationId, monthOf(at));
}

/** KEYS: the day's set. ARGV: run, limit (-1: none), ttl ms. 1 = counted now, 2 = counted before, 0 = over. */
const COUNT_RUN = luaScript(
  "CountRun",
  1,
  `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 2 end
local limit = tonumber(ARGV[2])
if limit >= 0 and redis.call('SCARD', KEYS[1]) >= limit then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`,
);

type RunCount = "counted" | "counted-before" | "over-limit";

export interface RunUsage {
  /** Counts the run against its repository's day unless that would pass `limit` (null: no limit). */
  countRun(repoId: number, run: string, limit: number | null, at?: Date): Promise<RunCount>;
  /** Whether the run has been counted (it started before: a retry, a hand-back). */
  counted(repoId: number, run: string, at?: Date): Promise<boolean>;
  runsToday(repoId: number, at?: Date): Promise<number>;
  addSpend(installationId: number, usd: number, at?: Date): Promise<void>;
  spentThisMonth(installationId: number, at?: Date): Promise<number>;
}

export function runUsage(redis: Redis, names: QueueNames): RunUsage {
  return {
    async countRun(repoId, run, limit, at = new Date()) {
      const key = runsKey(names, repoId, at);
      const result = await COUNT_RUN(redis, [key], [run, limit ?? -1, 2 * DAY_MS]);
      return result === 1 ? "counted" : result === 2 ? "counted-before" : "over-limit";
    },
    async counted(repoId, run, at = new Date()) {
      return (await redis.sismember(runsKey(names, repoId, at), run)) === 1;
    },
    runsToday: (repoId, at = new Date()) => redis.scard(runsKey(names, repoId, at)),
    async addSpend(installationId, usd, at = new Date()) {
      if (!(usd > 0)) return;
      const key = spendKey(names, installationId, at);
      await redis
        .multi()
        .incrbyfloat(key, usd)
        .pexpire(key, 62 * DAY_MS)
        .exec();
    },
    async spentThisMonth(installationId, at = new Date()) {
      return Number((await redis.get(spendKey(names, installationId, at))) ?? 0);
    },
  };
}
