/**
 * A worker process for the stalled-recovery test: takes a job from the named queue, prints
 * `active JOB_ID`, and never finishes, so the test can SIGKILL it mid-run.
 * Usage: tsx test/support/hanging-worker.ts REDIS_URL PREFIX QUEUE LOCK_MS
 */
import { startFixWorker } from "../../worker/main.js";
import { silentLogger } from "./logs.js";

const [redisUrl = "", prefix = "", queueName = "", lockMs = "2000"] = process.argv.slice(2);
await startFixWorker({
  redisUrl,
  prefix,
  queueName,
  lockDurationMs: Number(lockMs),
  logger: silentLogger(),
  process: (job) => {
    console.log(`active ${job.id}`);
    return new Promise<never>(() => {});
  },
});
