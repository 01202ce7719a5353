import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { join } from "node:path";
import type { Job } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  connectRedis,
  createFixQueue,
  enqueueFix,
  type FixJobData,
  type FixQueue,
  requestCancel,
} from "../../../src/queue/index.js";
import { type FixWorker, startFixWorker } from "../../../worker/index.js";
import { type AbortReason, decodeAbortReason } from "../../../worker/pipeline/cancel.js";
import { redisUrl, requireRedis } from "../../support/services.js";

const redisUp = await requireRedis();
const ROOT = join(import.meta.dirname, "../../..");

function jobData(issueNumber: number): FixJobData {
  return {
    installationId: 1,
    owner: "octo",
    repo: "demo",
    repoId: 42,
    issueNumber,
    requestedBy: "alice",
    trigger: "label",
    deliveryId: randomUUID(),
  };
}

/** Resolves with the abort reason once the signal fires. */
function untilAborted(signal: AbortSignal): Promise<AbortReason> {
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(decodeAbortReason(signal.reason)), { once: true }),
  );
}

describe.runIf(redisUp)("the fix worker over real Redis", () => {
  // A fresh prefix per file run: parallel runs and other engineers' queues never collide.
  const prefix = `af-test-worker-${randomUUID().slice(0, 8)}`;
  let redis: Redis;
  let fixQueue: FixQueue;
  const workers: FixWorker[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    redis = await connectRedis(redisUrl(), "producer");
    fixQueue = createFixQueue(redis, { prefix, name: "fix", jobOptions: { attempts: 1 } });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
    await Promise.all(workers.splice(0).map((w) => w.shutdown(0)));
  });
  afterAll(async () => {
    await fixQueue.queue.obliterate({ force: true });
    await fixQueue.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  async function worker(
    process: (job: Job<FixJobData>, signal: AbortSignal) => Promise<unknown>,
    concurrency = 1,
  ) {
    const started = await startFixWorker({
      redisUrl: redisUrl(),
      prefix,
      queueName: "fix",
      concurrency,
      process,
      // Short checks so a dead worker's lapsed lock is noticed quickly.
      stalledIntervalMs: 500,
      log: () => {},
    });
    workers.push(started);
    return started;
  }

  it("aborts a running job when a cancel is requested from another connection, with who asked", async () => {
    const reasons: Promise<AbortReason>[] = [];
    let markActive: () => void = () => {};
    const active = new Promise<void>((resolve) => (markActive = resolve));
    await worker(async (_job, signal) => {
      reasons.push(untilAborted(signal));
      markActive();
      await reasons[0];
      throw new Error("aborted");
    });
    const queued = await enqueueFix(fixQueue, jobData(1));
    expect(queued.status).toBe("queued");
    await active;
    const outcome = await requestCancel(fixQueue, queued.jobId, "bob", "label removed");
    expect(outcome.status).toBe("signalled");
    expect(await reasons[0]).toEqual({ kind: "cancelled", by: "bob", reason: "label removed" });
  });

  it("runs jobs side by side up to its concurrency", async () => {
    let running = 0;
    let peak = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let seen = 0;
    let allStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => (allStarted = resolve));
    await worker(async () => {
      running++;
      peak = Math.max(peak, running);
      if (++seen === 2) allStarted();
      await gate;
      running--;
    }, 2);
    await enqueueFix(fixQueue, jobData(2));
    await enqueueFix(fixQueue, jobData(3));
    await started;
    expect(peak).toBe(2);
    release();
  });

  it("on shutdown stops taking jobs, waits out the grace period, then cancels what still runs", async () => {
    let reason: Promise<AbortReason> | undefined;
    let markActive: () => void = () => {};
    const active = new Promise<void>((resolve) => (markActive = resolve));
    const fixWorker = await worker(async (_job, signal) => {
      reason = untilAborted(signal);
      markActive();
      await reason;
    });
    const first = await enqueueFix(fixQueue, jobData(4));
    await active;
    expect(fixWorker.activeJobs()).toEqual([first.jobId]);
    await fixWorker.shutdown(200);
    expect(await reason).toMatchObject({ kind: "shutdown" });
    // Closed: a job added now stays waiting.
    const second = await enqueueFix(fixQueue, jobData(5));
    expect(await fixQueue.queue.getJobState(second.jobId)).toBe("waiting");
    await fixQueue.queue.remove(second.jobId);
  });

  it("hands the job of a worker killed with SIGKILL to another worker", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/support/hanging-worker.ts", redisUrl(), prefix, "fix", "1500"],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(child);
    const queued = await enqueueFix(fixQueue, jobData(6));
    let out = "";
    child.stdout?.setEncoding("utf8");
    await new Promise<void>((resolve) =>
      child.stdout?.on("data", (chunk: string) => {
        out += chunk;
        if (out.includes(`active ${queued.jobId}`)) resolve();
      }),
    );
    child.kill("SIGKILL");
    await once(child, "exit");
    const picked = new Promise<string>((resolve) => {
      void worker(async (job) => resolve(job.id ?? ""));
    });
    expect(await picked).toBe(queued.jobId);
  });
});
