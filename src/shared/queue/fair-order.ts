/**
 * The order runs start in, fair between installations: a job's rank is the number of its
 * installation's runs already queued or running. The first FREE_RANKS of an installation go to the
 * plain waiting list in arrival order (BullMQ serves it before any prioritized job); later ones get
 * their rank as BullMQ priority, so an installation's k-th live run waits behind every other
 * installation's runs of lower rank: an organisation that labels 200 issues gets ranks 0 to 199, and
 * another's single run (rank 0) goes before all but the first FREE_RANKS of them. The count is exact: the
 * installation's ids are kept in a set and those whose job has finished or is gone are dropped (read
 * from BullMQ's job hash, `finishedOn`) each time one is added.
 */
import type { Redis } from "ioredis";
import { fairLiveKey, jobKeyPrefix, type QueueNames } from "./keys.js";
import { luaScript } from "./lua-script.js";

/** Ranks kept in arrival order: most installations never have more live runs at once. */
const FREE_RANKS = 2;

/** BullMQ's highest priority (2^21); a larger rank is served in arrival order with it. */
const MAX_PRIORITY = 2_097_152;

/** KEYS: the installation's live set. ARGV: job key prefix, job id, now. Returns the rank. */
const RANK = luaScript(
  "FairRank",
  1,
  `
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  local key = ARGV[1] .. id
  if id ~= ARGV[2] and (redis.call('EXISTS', key) == 0 or redis.call('HEXISTS', key, 'finishedOn') == 1) then
    redis.call('ZREM', KEYS[1], id)
  end
end
redis.call('ZREM', KEYS[1], ARGV[2])
local rank = redis.call('ZCARD', KEYS[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('PEXPIRE', KEYS[1], 30 * 24 * 3600 * 1000)
return rank`,
);

/** Counts the job among its installation's live runs; returns the priority to add it with (0: none). */
export async function fairPriority(
  redis: Redis,
  names: QueueNames,
  installationId: number,
  jobId: string,
): Promise<number> {
  const live = fairLiveKey(names, installationId);
  const rank = (await RANK(redis, [live], [jobKeyPrefix(names), jobId, Date.now()])) as number;
  return rank < FREE_RANKS ? 0 : Math.min(rank, MAX_PRIORITY);
}
