/**
 * Redis for the queue and webhook tests, through test/support/services.ts: unreachable Redis fails
 * under CI=true and skips loudly elsewhere. Each test uses a key prefix of its own.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { redisUrl, requireRedis } from "./services.js";

export const TEST_REDIS_URL = redisUrl();

export const redisAvailable = requireRedis;

/** A key prefix of our own so parallel test runs never collide; removed by `dropPrefix`. */
export function testPrefix(): string {
  return `test-af-${randomUUID().slice(0, 8)}`;
}

export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
}
