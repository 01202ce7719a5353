/**
 * Per-installation run slots, shared by every worker process on one Redis. A slot is a lease (a
 * sorted set member scored by its expiry), taken and given back by Lua scripts so two workers never
 * both take the last one. A worker that dies stops renewing its leases: they lapse and the slots come
 * back without anyone releasing them. A job that finds its installation full is parked: it waits
 * delayed in BullMQ (so it stays cancellable and is never lost) and its id is remembered in a second
 * sorted set, oldest first; a release promotes the oldest parked job to the back of the waiting list,
 * so other installations' jobs already waiting go first (round robin between installations).
 */
import type { Redis } from "ioredis";
import { fairParkedKey, fairSlotsKey, type QueueNames } from "./keys.js";
import { luaScript } from "./lua-script.js";

/** Redis server time in ms: every worker's leases are judged by the same clock. */
const NOW =
  "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)";

/** KEYS: slots, parked. ARGV: jobId, limit, leaseMs. 1 = taken (or already held), 0 = parked. */
const ACQUIRE = luaScript(
  "FairSlotAcquire",
  2,
  `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lease = tonumber(ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], lease * 2)
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
return 0`,
);

/** KEYS: slots. ARGV: jobId, leaseMs. 1 = renewed, 0 = the lease had lapsed and was taken back. */
const RENEW = luaScript(
  "FairSlotRenew",
  1,
  `${NOW}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1`,
);

/** KEYS: slots, parked. ARGV: jobId, limit. Frees the slot; pops as many parked ids as slots are free. */
const RELEASE = luaScript(
  "FairSlotRelease",
  2,
  `${NOW}
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = tonumber(ARGV[2]) - redis.call('ZCARD', KEYS[1])
if free <= 0 then return {} end
local popped = redis.call('ZPOPMIN', KEYS[2], free)
local ids = {}
for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
return ids`,
);

/** KEYS: slots. ARGV: limit. The slots free now. */
const FREE = luaScript(
  "FairSlotFree",
  1,
  `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])`,
);

function slotKeys(names: QueueNames, installationId: number): [string, string] {
  return [fairSlotsKey(names, installationId), fairParkedKey(names, installationId)];
}

export interface SlotRequest {
  installationId: number;
  jobId: string;
  /** The installation's runs at once. */
  limit: number;
  /** How long a slot lives without renewal: the time a dead worker's slot takes to come back. */
  leaseMs: number;
}

/** Takes a slot for the job (true), or parks it (false). Taking a slot the job already holds renews it. */
export async function acquireSlot(redis: Redis, names: QueueNames, request: SlotRequest): Promise<boolean> {
  const [slots, parked] = slotKeys(names, request.installationId);
  const taken = await ACQUIRE(redis, [slots, parked], [request.jobId, request.limit, request.leaseMs]);
  return taken === 1;
}

/** Extends the job's lease; false when it had lapsed (the worker was too slow: the slot may be another's). */
export async function renewSlot(redis: Redis, names: QueueNames, request: SlotRequest): Promise<boolean> {
  const [slots] = slotKeys(names, request.installationId);
  return (await RENEW(redis, [slots], [request.jobId, request.leaseMs])) === 1;
}

/** Gives the slot back; returns the parked job ids (oldest first) that now have a free slot to try. */
export async function releaseSlot(redis: Redis, names: QueueNames, request: SlotRequest): Promise<string[]> {
  const [slots, parked] = slotKeys(names, request.installationId);
  return (await RELEASE(redis, [slots, parked], [request.jobId, request.limit])) as string[];
}

/** How many of the installation's slots are free now (lapsed leases count as free). */
export async function freeSlots(redis: Redis, names: QueueNames, request: SlotRequest): Promise<number> {
  const [slots] = slotKeys(names, request.installationId);
  return (await FREE(redis, [slots], [request.limit])) as number;
}

/** The jobs holding a slot of the installation now (lapsed leases left out). */
export async function slotHolders(
  redis: Redis,
  names: QueueNames,
  installationId: number,
): Promise<string[]> {
  const [slots] = slotKeys(names, installationId);
  return redis.zrangebyscore(slots, Date.now(), "+inf");
}
