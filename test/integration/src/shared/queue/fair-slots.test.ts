import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { slotHolders } from "../../../../../src/shared/queue/fair-slots.js";
import {
  connectRedis,
  createFixQueue,
  enqueueFix,
  type FixJobData,
  type FixQueue,
} from "../../../../../src/shared/queue/index.js";
import { redisUrl, requireRedis } from "../../../../support/services.js";
import { waitFor } from "../../../../support/stack-parts.js";

// Real Redis, and real worker processes (test/support/fair-worker.ts) each running the real admission:
// the slot accounting must hold across processes, not only inside one.
const redisUp = await requireRedis();
const ROOT = join(import.meta.dirname, "../../../../..");

function job(installationId: number, repoId: number, issueNumber: number): FixJobData {
  return {
    installationId,
    owner: `org${installationId}`,
    repo: "demo",
    repoId,
    issueNumber,
    requestedBy: "maintainer",
    trigger: "label",
    deliveryId: randomUUID(),
  };
}

describe.runIf(redisUp)("per-installation slots across worker processes", () => {
  const prefix = `af-test-fair-${randomUUID().slice(0, 8)}`;
  const name = "fix";
  let redis: Redis;
  let fixQueue: FixQueue;
  const children: ChildProcess[] = [];
  const probe = (key: string) => `${prefix}:probe:${key}`;

  /** A worker process; resolves once it takes jobs. */
  async function fairWorker(concurrency: number, holdMs: number, quotas: object, maxStalled = 1) {
    const args = [redisUrl(), prefix, name, String(concurrency), String(holdMs), JSON.stringify(quotas)];
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/support/fair-worker.ts", ...args, String(maxStalled)],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(child);
    let out = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      out += chunk;
    });
    await waitFor("the worker process to start", () => out.includes("ready"), 60_000);
    return { child, output: () => out };
  }

  beforeAll(async () => {
    redis = await connectRedis(redisUrl(), "producer");
    fixQueue = createFixQueue(redis, { prefix, name, jobOptions: { attempts: 1 } });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
    await fixQueue.queue.obliterate({ force: true });
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  });
  afterAll(async () => {
    await fixQueue.close();
    redis.disconnect();
  });

  it("holds an installation to its runs at once over two processes, and a small installation's run is not starved", async () => {
    for (let issue = 1; issue <= 10; issue++) await enqueueFix(fixQueue, job(1, 10, issue));
    const small = await enqueueFix(fixQueue, job(2, 20, 1));
    const quotas = { runsAtOnce: 2, runsPerDayPerRepository: null, monthlyBudgetUsd: null };
    await Promise.all([fairWorker(2, 300, quotas), fairWorker(2, 300, quotas)]);

    await waitFor("all 11 runs to end", async () => (await redis.llen(probe("ends"))) === 11, 120_000);
    const starts = await redis.lrange(probe("starts"), 0, -1);
    expect(new Set(starts).size).toBe(11); // none twice
    const peaks = (await redis.lrange(probe("peaks:1"), 0, -1)).map(Number);
    expect(Math.max(...peaks)).toBe(2);
    // Ten runs of installation 1 were queued first; installation 2's one run is picked second, so it
    // starts among the first few (in plain FIFO order it would be the eleventh). "Few", not "second":
    // the two processes log their starts on their own, and on a loaded machine the one holding the
    // small run can log after the other has ended a 300 ms run and started the next.
    expect(starts.indexOf(small.jobId)).toBeLessThan(5);
    expect(await slotHolders(redis, { prefix, name }, 1)).toEqual([]);
  });

  it("gets the slot of a worker that died back once its lease lapses, so the waiting run goes on", async () => {
    const quotas = { runsAtOnce: 1, leaseSeconds: 1, recheckSeconds: 1 };
    const first = await enqueueFix(fixQueue, job(3, 30, 1));
    const hanging = await fairWorker(2, -1, quotas);
    await waitFor("the first run to start", () => hanging.output().includes(`active ${first.jobId}`), 60_000);
    const second = await enqueueFix(fixQueue, job(3, 30, 2));
    await waitFor(
      "the second run to wait",
      async () => (await fixQueue.queue.getJobState(second.jobId)) === "delayed",
      60_000,
    );
    hanging.child.kill("SIGKILL");
    // The survivor fails a job on its first stall: the dead run never comes back to give its slot.
    await fairWorker(1, 50, quotas, 0);

    await waitFor(
      "the second run to end",
      async () => (await redis.lrange(probe("ends"), 0, -1)).includes(second.jobId),
      60_000,
    );
    await waitFor(
      "the dead run to fail",
      async () => (await fixQueue.queue.getJobState(first.jobId)) === "failed",
      60_000,
    );
    expect(await slotHolders(redis, { prefix, name }, 3)).toEqual([]);
  });
});
