import { setTimeout as sleep } from "node:timers/promises";
import type { Worker } from "bullmq";
import type { FixJobData } from "../../src/shared/queue/index.js";
import type { Logger } from "../log.js";
import { encodeAbortReason } from "./abort-reason.js";
import type { HeldJobs } from "./options.js";

/** Stop taking jobs, wait up to `graceMs`, hand back what is unfinished, then `close`; once. */
export function shutdownOnce(
  worker: Worker<FixJobData>,
  { running, finishing }: HeldJobs,
  reaper: ReturnType<typeof setInterval> | undefined,
  close: () => Promise<void>,
  logger: Logger,
) {
  let closing: Promise<void> | undefined;
  return (graceMs: number): Promise<void> => {
    closing ??= (async () => {
      if (reaper) clearInterval(reaper);
      await worker.pause(true);
      const all = Promise.allSettled([...running.values()]);
      const timedOut = await Promise.race([all.then(() => false), sleep(graceMs, true, { ref: false })]);
      const unfinished = [...running.keys()].filter((id) => !finishing.has(id));
      if (timedOut && unfinished.length > 0) {
        logger.info(`grace period over: handing ${unfinished.length} run(s) back to the queue`);
        for (const id of unfinished) worker.cancelJob(id, SHUTDOWN_REASON);
      }
      await Promise.allSettled([...running.values()]);
      await close();
    })();
    return closing;
  };
}

const SHUTDOWN_REASON = encodeAbortReason({
  kind: "shutdown",
  by: "the worker shutting down",
  reason: "shutdown",
});
