import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { UnrecoverableError } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CancelReason } from "../../../../src/shared/errors.js";
import {
  connectRedis,
  createFixQueue,
  enqueueFix,
  type FixJobData,
  type FixQueue,
  requestCancel,
} from "../../../../src/shared/queue/index.js";
import { type FixJobProcessor, type FixWorker, startFixWorker } from "../../../../worker/main.js";
import { type Abandonment, completed } from "../../../../worker/run-end.js";
import { capturingLogger, type LogLine, silentLogger } from "../../../support/logs.js";
import { redisUrl, requireRedis } from "../../../support/services.js";

const redisUp = await requireRedis();
const ROOT = join(import.meta.dirname, "../../../..");

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
function untilAborted(signal: AbortSignal): Promise<CancelReason> {
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(signal.reason as CancelReason), { once: true }),
  );
}

/** A worker process (test/support/hanging-worker.ts) that takes a job and hangs, once it holds `jobId`. */
async function hangingWorker(prefix: string, jobId: string, children: ChildProcess[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/support/hanging-worker.ts", redisUrl(), prefix, "fix", "1500"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(child);
  let out = "";
  child.stdout?.setEncoding("utf8");
  await new Promise<void>((resolve) =>
    child.stdout?.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes(`active ${jobId}`)) resolve();
    }),
  );
  return child;
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
    process: FixJobProcessor,
    concurrency = 1,
    options: Partial<Parameters<typeof startFixWorker>[0]> = {},
  ) {
    const started = await startFixWorker({
      redisUrl: redisUrl(),
      prefix,
      queueName: "fix",
      concurrency,
      process,
      // Short checks so a dead worker's lapsed lock is noticed quickly.
      stalledIntervalMs: 500,
      logger: silentLogger(),
      ...options,
    });
    workers.push(started);
    return started;
  }

  it("aborts a running job when a cancel is requested from another connection, with who asked", async () => {
    const reasons: Promise<CancelReason>[] = [];
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
      return completed(null);
    }, 2);
    await enqueueFix(fixQueue, jobData(2));
    await enqueueFix(fixQueue, jobData(3));
    await started;
    expect(peak).toBe(2);
    release();
  });

  it("on shutdown stops taking jobs, waits out the grace period, then hands what still runs back to the queue for another worker", async () => {
    let reason: Promise<CancelReason> | undefined;
    let markActive: () => void = () => {};
    const active = new Promise<void>((resolve) => (markActive = resolve));
    const fixWorker = await worker(async (_job, signal) => {
      reason = untilAborted(signal);
      markActive();
      await reason;
      throw new Error("stopped");
    });
    const first = await enqueueFix(fixQueue, jobData(4));
    await active;
    expect(fixWorker.activeJobs()).toEqual([first.jobId]);
    await fixWorker.shutdown(200);
    expect(await reason).toMatchObject({ kind: "shutdown" });
    // Back in the queue, not failed: no attempt spent, the hand-back counted in its data.
    const handedBack = await fixQueue.queue.getJob(first.jobId);
    expect(await handedBack?.getState()).toBe("waiting");
    expect(handedBack?.attemptsMade).toBe(0);
    expect(handedBack?.data.handoffs).toBe(1);
    // Closed: it takes nothing more; another worker runs the job to the end.
    const second = await enqueueFix(fixQueue, jobData(5));
    expect(await fixQueue.queue.getJobState(second.jobId)).toBe("waiting");
    await fixQueue.queue.remove(second.jobId);
    const ran: Array<number | undefined> = [];
    await worker(async (job) => {
      ran.push(job.data.handoffs);
      return completed("done");
    });
    await expect.poll(() => fixQueue.queue.getJobState(first.jobId), { timeout: 10_000 }).toBe("completed");
    expect(ran).toEqual([1]);
  });

  it("at shutdown a run whose outcome is reported is let finish its cleanup, not handed back", async () => {
    let release: () => void = () => {};
    const cleanup = new Promise<void>((resolve) => (release = resolve));
    let markActive: () => void = () => {};
    const active = new Promise<void>((resolve) => (markActive = resolve));
    let aborted = false;
    const logs: LogLine[] = [];
    const fixWorker = await worker(
      async (_job, signal, finishing) => {
        signal.addEventListener("abort", () => (aborted = true), { once: true });
        finishing(); // the final status is written; removing the checkout and revoking the token remain
        markActive();
        await cleanup;
        return completed("done");
      },
      1,
      { logger: capturingLogger(logs) },
    );
    const { jobId } = await enqueueFix(fixQueue, jobData(9));
    await active;
    const stopping = fixWorker.shutdown(0);
    await expect.poll(() => fixWorker.worker.isPaused()).toBe(true);
    // A timer set after the shutdown's zero grace began: it fires after the grace is over.
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await stopping;
    expect(aborted).toBe(false);
    expect(logs.filter((line) => line.msg.includes("grace period over"))).toEqual([]);
    expect(await fixQueue.queue.getJobState(jobId)).toBe("completed");
  });

  it("hands the job of a worker killed with SIGKILL to another worker", async () => {
    const queued = await enqueueFix(fixQueue, jobData(6));
    const child = await hangingWorker(prefix, queued.jobId, children);
    child.kill("SIGKILL");
    await once(child, "exit");
    const picked = new Promise<string>((resolve) => {
      void worker(async (job) => {
        resolve(job.id ?? "");
        return completed(null);
      });
    });
    expect(await picked).toBe(queued.jobId);
  });

  it("a job removed while its dead worker held it is finalized, once, by a live worker", async () => {
    const queued = await enqueueFix(fixQueue, { ...jobData(7), statusCommentId: 77 });
    const child = await hangingWorker(prefix, queued.jobId, children);
    // Two live workers hear the removal; their stalled checks are slow so the job stays active meanwhile.
    const finalized: { job: FixJobData; abandonment: Abandonment }[] = [];
    let markFinal: () => void = () => {};
    const final = new Promise<void>((resolve) => (markFinal = resolve));
    for (let i = 0; i < 2; i++) {
      await worker(() => new Promise(() => {}), 1, {
        stalledIntervalMs: 600_000,
        onAbandoned: async (job, abandonment) => {
          finalized.push({ job, abandonment });
          markFinal();
        },
      });
    }
    child.kill("SIGKILL");
    await once(child, "exit");
    // BullMQ refuses to remove a locked job: wait for the dead worker's lock to lapse.
    const lockKey = `${prefix}:fix:${queued.jobId}:lock`;
    while ((await redis.exists(lockKey)) === 1) await sleep(100);
    expect(await fixQueue.queue.getJobState(queued.jobId)).toBe("active");
    await fixQueue.queue.remove(queued.jobId);
    await final;
    await sleep(300); // room for a second (wrong) finalization to show
    expect(finalized).toHaveLength(1);
    expect(finalized[0]?.abandonment).toEqual({ kind: "removed" });
    expect(finalized[0]?.job).toMatchObject({ issueNumber: 7, statusCommentId: 77, owner: "octo" });
  });

  it("finalizes a job that failed for good without its processor leaving the status final, and only that", async () => {
    const finalized: { job: FixJobData; abandonment: Abandonment }[] = [];
    let ended = 0;
    let markEnded: () => void = () => {};
    const bothEnded = new Promise<void>((resolve) => (markEnded = resolve));
    const fixWorker = await worker(
      async (job) => {
        // Issue 8: the processor wrote the final status itself; issue 9: it could not.
        if (job.data.issueNumber === 8)
          return { kind: "failed", message: "tests still fail", statusWritten: true, cause: null };
        throw new UnrecoverableError("installation 1 was removed");
      },
      1,
      {
        onAbandoned: async (job, abandonment) => {
          finalized.push({ job, abandonment });
        },
      },
    );
    fixWorker.worker.on("failed", () => {
      if (++ended === 2) markEnded();
    });
    await enqueueFix(fixQueue, jobData(8));
    await enqueueFix(fixQueue, jobData(9));
    await bothEnded;
    await sleep(300); // room for a finalization of issue 8 to show
    expect(finalized).toEqual([
      {
        job: expect.objectContaining({ issueNumber: 9 }),
        abandonment: { kind: "failed", message: "installation 1 was removed" },
      },
    ]);
  });
});
