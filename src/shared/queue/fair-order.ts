/**
 * The order runs start in, fair between installations: a job's rank is the number of its
 * installation's runs already queued or running. The first FREE_RANKS of an installation go to the
 * plain waiting list in arrival order (BullMQ serves it before any prioritized job); later ones get
 * their rank as BullMQ priority, so an installation's k-th live run waits behind every other
 * installation's runs of lower rank: an organisation that labels 200 issues gets ranks 0 to 199, and
 * another's single run (rank 0) goes before all but the first FREE_RANKS of them. The count is exact: the
 * installation's ids are kept in a set and those whose job has finished or is gone are dropped (read
 * from BullMQ's job hash, `finishedOn`) each time one is added. A job is ranked just before it is
 * added, under its enqueue's claim (fix-queue.ts): in a burst (an organisation labelling many issues at
 * once) the others' jobs may not exist yet, so an id without a job still counts while its claim is
 * held; dropping it would rank the whole burst 0, in arrival order.
 */
import type { Redis } from "ioredis";
import { claimKey, fairLiveKey, jobKeyPrefix, type QueueNames } from "./keys.js";
import { luaScript } from "./lua-script.js";

/** Ranks kept in arrival order: most installations never have more live runs at once. */
const FREE_RANKS = 2;

/** BullMQ's highest priority (2^21); a larger rank is served in arrival order with it. */
const MAX_PRIORITY = 2_097_152;

/**
 * KEYS: the installation's live set (id -> when it was ranked). ARGV: job key prefix, job id, now, claim
 * key prefix (an enqueue in flight holds `<prefix><id>`). Returns the rank.
 */
const RANK = luaScript(
  "FairRank",
  1,
  `
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  local key = ARGV[1] .. id
  if id ~= ARGV[2] then
    local finished = redis.call('EXISTS', key) == 1 and redis.call('HEXISTS', key, 'finishedOn') == 1
    local gone = redis.call('EXISTS', key) == 0 and redis.call('EXISTS', ARGV[4] .. id) == 0
    if finished or gone then
      redis.call('ZREM', KEYS[1], id)
    end
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
  const args = [jobKeyPrefix(names), jobId, Date.now(), claimKey(names, "")];
  const rank = (await RANK(redis, [live], args)) as number;
  return rank < FREE_RANKS ? 0 : Math.min(rank, MAX_PRIORITY);
}
