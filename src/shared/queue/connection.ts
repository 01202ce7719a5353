/**
 * Redis connections for the queue. The webhook side fails fast (GitHub waits 10 s for the reply, so
 * a request must not hang on a Redis outage); BullMQ workers and subscribers retry forever.
 */
import { Redis } from "ioredis";

type RedisRole = "producer" | "worker" | "subscriber";

/**
 * `logError` hears of connection errors, each distinct one once until the connection is back
 * (ioredis repeats it on every reconnect attempt). Default: console.warn.
 */
export async function connectRedis(
  url: string,
  role: RedisRole,
  logError: (message: string) => void = (message) => console.warn(message),
): Promise<Redis> {
  const failFast = role === "producer";
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: !failFast,
    maxRetriesPerRequest: failFast ? 1 : null,
    connectTimeout: 5_000,
    connectionName: `agent-fix-${role}`,
  });
  // ioredis emits "error" on every failed reconnect; without a listener Node would crash the process.
  let last = "";
  redis.on("error", (error: Error) => {
    if (error.message === last) return;
    last = error.message;
    logError(`Redis (${role} connection): ${error.message}; reconnecting`);
  });
  redis.on("ready", () => {
    last = "";
  });
  await redis.connect();
  return redis;
}
