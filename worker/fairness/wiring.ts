/**
 * The fairness parts of one worker process, over the parts worker/processor.ts built: the admission
 * (its status comments go through the run's own installation client) and the spend counter that
 * adds each model call's cost to its installation's month (spend.ts).
 */
import type { Redis } from "ioredis";
import type { FixQueue, QueueNames } from "../../src/queue/index.js";
import { runUsage } from "../../src/queue/usage.js";
import type { QuotasConfig } from "../config/quotas.js";
import type { Logger } from "../log.js";
import { type ProcessorDeps, runName } from "../pipeline/fix-job.js";
import { runAdmission } from "./admission.js";
import { monthlySpend } from "./spend.js";

interface FairnessParts {
  redis: Redis;
  names: QueueNames;
  quotas: QuotasConfig;
  auth: ProcessorDeps["auth"];
  status: ProcessorDeps["status"];
  producer: FixQueue;
  logger: Logger;
}

export function fairnessParts(parts: FairnessParts) {
  const { redis, names, logger } = parts;
  const usage = runUsage(redis, names);
  const admission = runAdmission({
    redis,
    names,
    quotas: parts.quotas,
    usage,
    logger,
    notify: async (job, notice) => {
      const credentials = parts.auth.forRun(job.installationId, job.repoId);
      try {
        const status = parts.status(await credentials.octokit(), job, runName(job));
        if (notice.kind === "waiting") await status.progress("queued", { note: notice.text });
        else await status.failed(notice.text);
      } finally {
        await credentials.revoke();
      }
    },
    promote: async (jobId) => {
      const job = await parts.producer.queue.getJob(jobId);
      return job
        ? job.promote().then(
            () => true,
            () => false,
          )
        : false;
    },
  });
  return { admission, spendOf: monthlySpend(usage, logger) };
}
