/**
 * Trajectories in the real Redis (src/shared/trajectory-store.ts): written by the worker's recorder after every
 * save, read back by any process, compressed, kept for the retention period, capped in size, listed
 * newest first for the dashboard.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Trajectory } from "../../../../src/shared/contracts.js";
import { connectRedis } from "../../../../src/shared/queue/index.js";
import { createTrajectoryStore } from "../../../../src/shared/trajectory-store.js";
import { TrajectoryRecorder } from "../../../../worker/agent/trajectory.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";

const up = await redisAvailable();
const FIXTURES = join(import.meta.dirname, "../../../fixtures/dashboard");
const DAY_MS = 24 * 60 * 60 * 1000;

async function fixture(name: string): Promise<Trajectory> {
  return JSON.parse(await readFile(join(FIXTURES, name), "utf8")) as Trajectory;
}

/** A long run: the fixture's steps and history repeated, as a 200-step run repeats its tools' output. */
function longRun(base: Trajectory, times: number): Trajectory {
  const repeat = <T>(items: T[]) => Array.from({ length: times }, () => items).flat();
  return { ...base, trajectory: repeat(base.trajectory), history: repeat(base.history) };
}

describe.skipIf(!up)("trajectory store (real Redis)", () => {
  let redis: Redis;
  const prefix = testPrefix();
  const meta = { repo: "octo/calc", issue: 3, trigger: "label" };
  const store = (overrides: { retentionDays?: number; maxBytes?: number } = {}) =>
    createTrajectoryStore(redis, { prefix, retentionDays: 30, maxBytes: 8 * 1024 * 1024, ...overrides });

  beforeAll(async () => {
    redis = await connectRedis(TEST_REDIS_URL, "producer");
  });
  afterAll(async () => {
    await dropPrefix(redis, prefix);
    redis.disconnect();
  });

  it("stores compressed, reads back equal, and expires after the retention period", async () => {
    const trajectory = await fixture("gate-fails-once.traj");
    const saved = await store({ retentionDays: 2 }).save("octo-calc-3-1", meta, trajectory);
    expect(await store().load("octo-calc-3-1")).toEqual(trajectory);
    expect(saved.cut).toBe("none");
    expect(saved.storedBytes).toBeLessThan(saved.jsonBytes / 3);
    const ttl = await redis.pttl(`${prefix}:trajectory:octo-calc-3-1`);
    expect(ttl).toBeGreaterThan(DAY_MS);
    expect(ttl).toBeLessThanOrEqual(2 * DAY_MS);
    expect(await redis.pttl(`${prefix}:run:octo-calc-3-1`)).toBeGreaterThan(DAY_MS);
    const long = await store().save("octo-calc-3-2", meta, longRun(trajectory, 40));
    console.info(
      `trajectory in Redis: ${saved.jsonBytes} B JSON -> ${saved.storedBytes} B stored (5 steps); ` +
        `${long.jsonBytes} B -> ${long.storedBytes} B (its steps 40 times over)`,
    );
  });

  it("lists runs newest first with outcome, cost, steps; drops index entries past the retention", async () => {
    const own = testPrefix();
    const listed = createTrajectoryStore(redis, { prefix: own, retentionDays: 30, maxBytes: 1 << 20 });
    const base = await fixture("gate-fails-once.traj");
    const at = (daysAgo: number): Trajectory => ({
      ...base,
      info: { ...base.info, started_at: new Date(Date.now() - daysAgo * DAY_MS).toISOString() },
    });
    await listed.save("old-run", meta, at(40));
    await listed.save("older-run", { ...meta, issue: 1 }, at(2));
    await listed.save("newer-run", { ...meta, issue: 2 }, at(1));
    const runs = await listed.list();
    expect(runs.map((run) => run.name)).toEqual(["newer-run", "older-run"]);
    expect(runs[0]).toMatchObject({
      repo: "octo/calc",
      issue: 2,
      outcome: "submitted",
      steps: 5,
      costUsd: 0,
    });
    await dropPrefix(redis, own);
  });

  it("over the cap it drops the chat history, then cuts long texts; never more than the cap", async () => {
    const base = await fixture("gate-fails-once.traj");
    const noisy = longRun(base, 40);
    // Incompressible-ish output: random text, as binary or minified files dumped by a command are.
    noisy.trajectory = noisy.trajectory.map((step, index) => ({
      ...step,
      observation: `${index} ${randomBytes(15_000).toString("base64")}`,
    }));
    const capped = store({ maxBytes: 1024 * 1024 });
    const result = await capped.save("octo-calc-3-9", meta, noisy);
    expect(result.cut).toBe("texts");
    expect(result.storedBytes).toBeLessThanOrEqual(1024 * 1024);
    const back = await capped.load("octo-calc-3-9");
    expect(back?.history).toEqual([]);
    expect(back?.trajectory).toHaveLength(200);
    expect(back?.trajectory[7]?.observation).toContain("characters cut to fit the store");
    console.info(
      `200 steps of random output: ${result.jsonBytes} B JSON after the cut -> ${result.storedBytes} B stored`,
    );
    const whole = await store().save("octo-calc-3-8", meta, base);
    const historyOnly = await store({ maxBytes: whole.storedBytes - 1 }).save("octo-calc-3-8", meta, base);
    expect(historyOnly.cut).toBe("history");
    expect((await store().load("octo-calc-3-8"))?.trajectory).toEqual(base.trajectory);
  });

  it("the worker's recorder writes every save to the store, the latest one last", async () => {
    const trajectory = await fixture("gate-fails-once.traj");
    const live: Trajectory = { ...trajectory, trajectory: trajectory.trajectory.slice(0, 2) };
    const shared = store();
    const recorder = new TrajectoryRecorder(live, undefined, async (snapshot) => {
      await shared.save("octo-calc-3-5", meta, snapshot);
    });
    void recorder.save();
    live.trajectory.push(trajectory.trajectory[2]!);
    await recorder.save();
    expect((await shared.load("octo-calc-3-5"))?.trajectory).toHaveLength(3);
    expect((await shared.list()).find((run) => run.name === "octo-calc-3-5")?.steps).toBe(3);
  });

  it("refuses a name that is not a run name, and loads nothing for one", async () => {
    const trajectory = await fixture("gate-fails-once.traj");
    await expect(store().save("../x", meta, trajectory)).rejects.toThrow("Not a run name");
    expect(await store().load("../x")).toBeNull();
    expect(await store().load("no-such-run")).toBeNull();
  });
});
