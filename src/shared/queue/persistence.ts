/**
 * Whether the queue's Redis keeps its data through a restart. Queued runs live only there: BullMQ
 * advises append-only persistence (deploy/redis.conf). Managed Redis often refuses CONFIG; then
 * INFO persistence tells, and when neither answers nothing is claimed.
 */
import type { Redis } from "ioredis";

type RedisPersistence =
  | { kind: "append-only" }
  /** Neither append-only nor snapshots: a restart loses everything queued. */
  | { kind: "none" }
  /** Snapshots only: a restart loses what was queued since the last one. */
  | { kind: "snapshots-only" }
  | { kind: "unknown"; reason: string };

export async function redisPersistence(redis: Pick<Redis, "config" | "info">): Promise<RedisPersistence> {
  try {
    const [, appendonly] = (await redis.config("GET", "appendonly")) as string[];
    const [, save] = (await redis.config("GET", "save")) as string[];
    if (appendonly === "yes") return { kind: "append-only" };
    if (appendonly === "no") return save ? { kind: "snapshots-only" } : { kind: "none" };
  } catch {
    // CONFIG is disabled or renamed (managed Redis): ask INFO instead.
  }
  try {
    const info = await redis.info("persistence");
    const field = (name: string) => new RegExp(`^${name}:(.*)$`, "m").exec(info)?.[1]?.trim();
    if (field("aof_enabled") === "1") return { kind: "append-only" };
    if (field("aof_enabled") === "0") {
      // rdb_last_save_time exists either way; only CONFIG tells whether snapshots are scheduled.
      return { kind: "unknown", reason: "append-only is off; whether snapshots are taken is not visible" };
    }
    return { kind: "unknown", reason: "INFO persistence gives no aof_enabled" };
  } catch (error) {
    return { kind: "unknown", reason: error instanceof Error ? error.message : String(error) };
  }
}

/** The warning a worker logs at start, or null when Redis keeps the queue through a restart. */
export function persistenceWarning(persistence: RedisPersistence): string | null {
  const advice =
    "Run Redis with append-only persistence (appendonly yes, appendfsync everysec: see deploy/redis.conf), as BullMQ advises.";
  switch (persistence.kind) {
    case "append-only":
      return null;
    case "none":
      return `Redis has no persistence: a restart of it loses every queued run (their status comments stay "Queued"). ${advice}`;
    case "snapshots-only":
      return `Redis keeps snapshots only: a restart of it loses the runs queued since the last one. ${advice}`;
    case "unknown":
      return `Could not tell whether Redis keeps queued runs through a restart (${persistence.reason}). ${advice}`;
  }
}
