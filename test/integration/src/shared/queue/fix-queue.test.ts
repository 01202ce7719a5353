import { type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, GitHubError } from "../../../../../src/shared/errors.js";
import {
  type CancelRequest,
  connectRedis,
  createFixQueue,
  enqueueFix,
  type FixJobData,
  type FixQueue,
  fixJobId,
  readCancelRequest,
  requestCancel,
  subscribeToCancels,
  toQueueError,
} from "../../../../../src/shared/queue/index.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../../support/redis.js";

const up = await redisAvailable();

const base: FixJobData = {
  installationId: 7,
  owner: "octo",
  repo: "demo",
  repoId: 4242,
  issueNumber: 3,
  requestedBy: "alice",
  trigger: "label",
  deliveryId: "d-1",
};

describe.skipIf(!up)("fix queue on real Redis", () => {
  let redis: Redis;
  let fixQueue: FixQueue;
  let prefix: string;
  const closers: Array<() => Promise<unknown>> = [];

  beforeEach(async () => {
    prefix = testPrefix();
    redis = await connectRedis(TEST_REDIS_URL, "producer");
    fixQueue = createFixQueue(redis, { prefix, name: "fix" });
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await fixQueue.close();
    await dropPrefix(redis, prefix);
    redis.disconnect();
  });

  it("adds one job per issue whatever arrives, and prepares (status comment) only once", async () => {
    let prepared = 0;
    const prepare = async () => ({ statusCommentId: 100 + ++prepared });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        enqueueFix(fixQueue, { ...base, deliveryId: i < 5 ? "d-1" : `d-${i}` }, prepare),
      ),
    );
    expect(results.filter((r) => r.status === "queued")).toHaveLength(1);
    expect(prepared).toBe(1);
    expect(await fixQueue.queue.getJobCounts("waiting")).toEqual({ waiting: 1 });
    const job = await fixQueue.queue.getJob(fixJobId(base.repoId, base.issueNumber));
    expect(job?.data.statusCommentId).toBe(101);
    // A comment command during the queued run is a duplicate too.
    const again = await enqueueFix(fixQueue, { ...base, trigger: "comment", deliveryId: "d-x" }, prepare);
    expect(again).toMatchObject({ status: "duplicate", state: "waiting" });
  });

  it("ranks a burst of one installation's runs behind each other, another's single run ahead of its later ones", async () => {
    // Labelled at once: every rank is taken before any of these jobs exists.
    const burst = await Promise.all(
      [1, 2, 3, 4].map((issueNumber) =>
        enqueueFix(fixQueue, { ...base, issueNumber, deliveryId: `b-${issueNumber}` }),
      ),
    );
    const other = await enqueueFix(fixQueue, {
      ...base,
      installationId: 8,
      issueNumber: 9,
      deliveryId: "o-9",
    });
    const priority = async (result: { jobId?: string }) =>
      (await fixQueue.queue.getJob(result.jobId!))!.opts.priority ?? 0;
    // The first two keep arrival order (no priority); the third and fourth wait behind other installations.
    expect(await Promise.all(burst.map(priority))).toEqual([0, 0, 2, 3]);
    expect(await priority(other)).toBe(0);
  });

  it("never stores anything but the ids of the schema (no token can sneak in)", async () => {
    const withToken = { ...base, token: "ghs_secret" } as unknown as FixJobData;
    await expect(enqueueFix(fixQueue, withToken)).rejects.toThrow(/token/);
  });

  it("lets an issue run again once its previous job finished", async () => {
    const first = await enqueueFix(fixQueue, base);
    expect(first.status).toBe("queued");
    const connection = await connectRedis(TEST_REDIS_URL, "worker");
    const worker = new Worker(fixQueue.name, async () => "done", { connection, prefix });
    closers.push(async () => connection.disconnect());
    closers.push(() => worker.close());
    const job = await fixQueue.queue.getJob(first.jobId);
    await new Promise<void>((resolve) => worker.on("completed", () => resolve()));
    expect(await job?.getState()).toBe("completed");
    const second = await enqueueFix(fixQueue, { ...base, deliveryId: "d-2" });
    expect(second.status).toBe("queued");
  });

  it("removes a waiting job on cancel, and records who cancelled", async () => {
    const queued = await enqueueFix(fixQueue, base);
    const outcome = await requestCancel(fixQueue, queued.jobId, "bob", "label removed");
    expect(outcome.status).toBe("removed");
    expect(await fixQueue.queue.getJob(queued.jobId)).toBeUndefined();
    expect(await readCancelRequest(fixQueue, queued.jobId)).toMatchObject({
      by: "bob",
      reason: "label removed",
    });
    expect(await requestCancel(fixQueue, "fix-1-1", "bob", "x")).toEqual({
      status: "none",
      jobId: "fix-1-1",
    });
    // A new start clears the old cancel flag.
    await enqueueFix(fixQueue, { ...base, deliveryId: "d-3" });
    expect(await readCancelRequest(fixQueue, queued.jobId)).toBeNull();
  });

  it("aborts a running job on whichever worker holds it, through the cancel channel", async () => {
    const received: CancelRequest[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const aborted: string[] = [];
    const processor = async (job: Job, _token?: string, signal?: AbortSignal) => {
      started();
      await new Promise<void>((resolve) => {
        signal?.addEventListener("abort", () => {
          aborted.push(String(job.id));
          resolve();
        });
      });
      throw new Error("cancelled");
    };
    // Two "hosts": each a worker with its own subscriber connection.
    for (let i = 0; i < 2; i++) {
      const connection = await connectRedis(TEST_REDIS_URL, "worker");
      const subscriber = await connectRedis(TEST_REDIS_URL, "subscriber");
      const worker = new Worker(fixQueue.name, processor, { connection, prefix });
      const stop = await subscribeToCancels(subscriber, fixQueue.cancelChannel, (request) => {
        received.push(request);
        worker.cancelJob(request.jobId, request.reason);
      });
      closers.push(async () => {
        await stop();
        await worker.close();
        connection.disconnect();
        subscriber.disconnect();
      });
    }
    const queued = await enqueueFix(fixQueue, base);
    await running;
    const job = await fixQueue.queue.getJob(queued.jobId);
    expect(await job?.getState()).toBe("active");
    const outcome = await requestCancel(fixQueue, queued.jobId, "carol", "/agent-fix stop");
    expect(outcome.status).toBe("signalled");
    await expect.poll(() => aborted).toEqual([queued.jobId]);
    // Both hosts heard it; only the holder had something to abort.
    expect(received.map((r) => r.by)).toEqual(["carol", "carol"]);
  });

  it("retries only what retrying can fix", () => {
    const transient = new GitHubError("502 from GitHub", { code: "github_502", retryable: true });
    expect(toQueueError(transient)).toBe(transient);
    const permanent = toQueueError(new ConfigError("bad yaml"));
    expect(permanent.name).toBe("UnrecoverableError");
    expect(permanent.message).toBe("bad yaml");
    expect(toQueueError("boom").name).toBe("UnrecoverableError");
  });

  it("fails fast instead of queueing commands when Redis is gone (GitHub waits only 10 s)", async () => {
    const lost = await connectRedis(TEST_REDIS_URL, "producer");
    const lostQueue = createFixQueue(lost, { prefix, name: "fix" });
    lost.disconnect();
    await expect(enqueueFix(lostQueue, base)).rejects.toThrow();
    await lostQueue.close().catch(() => {});
  });
});
