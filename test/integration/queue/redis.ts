/**
 * Redis for the queue tests. Switch to test/support/services.ts (`requireRedis`) once it exists.
 * Unreachable Redis fails under CI=true and skips loudly elsewhere.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

export const TEST_REDIS_URL = process.env.AGENT_FIX_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export async function redisAvailable(): Promise<boolean> {
  const probe = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch (error) {
    if (process.env.CI === "true")
      throw new Error(`Redis is required under CI but ${TEST_REDIS_URL} is unreachable: ${error}`);
    console.warn(
      `\n!!! SKIPPING: Redis at ${TEST_REDIS_URL} is unreachable (${error}). Start redis-server. !!!\n`,
    );
    return false;
  } finally {
    probe.disconnect();
  }
}

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
