/**
 * A worker process for the fairness tests: startFixWorker with the real admission (worker/jobs/admission.ts)
 * over the named queue. Each job counts itself in while it runs (`probe:inflight:INSTALLATION`, every
 * count pushed to `probe:peaks:INSTALLATION`) and logs `probe:starts` / `probe:ends`, so the test reads
 * how many runs of an installation ran at once across processes. HOLD_MS < 0: jobs never end.
 * MAX_STALLED: times a job may lose its worker before it fails for good (default 1).
 * Usage: tsx test/support/fair-worker.ts REDIS_URL PREFIX QUEUE CONCURRENCY HOLD_MS QUOTAS_JSON [MAX_STALLED]
 */
import { setTimeout as sleep } from "node:timers/promises";
import { connectRedis, createFixQueue } from "../../src/shared/queue/index.js";
import { runUsage } from "../../src/shared/queue/usage.js";
import { quotasConfigSchema } from "../../worker/config/quotas.js";
import { runAdmission } from "../../worker/jobs/admission.js";
import { startFixWorker } from "../../worker/main.js";
import { completed } from "../../worker/run-end.js";
import { silentLogger } from "./logs.js";

const [
  redisUrl = "",
  prefix = "",
  name = "",
  concurrency = "1",
  holdMs = "0",
  quotas = "{}",
  maxStalled = "1",
] = process.argv.slice(2);
const redis = await connectRedis(redisUrl, "worker");
const producer = createFixQueue(redis, { prefix, name });
const names = { prefix, name };
const probe = (key: string) => `${prefix}:probe:${key}`;
const admission = runAdmission({
  redis,
  names,
  quotas: quotasConfigSchema.parse(JSON.parse(quotas)),
  usage: runUsage(redis, names),
  logger: silentLogger(),
  notify: async (job, notice) => {
    await redis.rpush(probe("notices"), JSON.stringify({ issue: job.issueNumber, ...notice }));
  },
  promote: async (jobId) => {
    const job = await producer.queue.getJob(jobId);
    return job
      ? job.promote().then(
          () => true,
          () => false,
        )
      : false;
  },
});
await startFixWorker({
  redisUrl,
  prefix,
  queueName: name,
  concurrency: Number(concurrency),
  lockDurationMs: 2_000,
  stalledIntervalMs: 500,
  maxStalledCount: Number(maxStalled),
  logger: silentLogger(),
  admission,
  process: async (job) => {
    const installation = job.data.installationId;
    const inflight = await redis.incr(probe(`inflight:${installation}`));
    await redis.rpush(probe(`peaks:${installation}`), inflight);
    await redis.rpush(probe("starts"), job.id ?? "");
    console.log(`active ${job.id}`);
    if (Number(holdMs) < 0) return new Promise<never>(() => {});
    await sleep(Number(holdMs));
    await redis.decr(probe(`inflight:${installation}`));
    await redis.rpush(probe("ends"), job.id ?? "");
    return completed({ ok: true });
  },
});
console.log("ready");
