/**
 * Worker process entry: a BullMQ Worker over the fix queue. Takes jobs with a configurable
 * concurrency, renews its locks through long runs (a dead worker's job is picked up by another after
 * the lock lapses), hears cancels from any webhook process, reaps orphaned sandboxes, and on SIGTERM
 * stops taking jobs, lets runs finish within a grace period, then hands the rest back to the queue
 * for another worker (a rolling deploy loses no run; their status comments say so). A job that ends
 * with no processor left to report (its worker died too often, or it was removed while a dead worker
 * held it) gets its final status from whichever worker process is alive. The BullMQ worker itself is
 * worker/fix-worker/ (start, job processor and handback, job ends, shutdown, lock loss); this file
 * composes it from the environment.
 */
import { pathToFileURL } from "node:url";
import { exitOnSignals } from "../src/process-signals.js";
import type { FixWorker } from "./fix-worker/options.js";
import { startFixWorker } from "./fix-worker/start.js";
import type { Logger } from "./log.js";
import { type OpsServer, startOpsServer } from "./ops-server.js";

export type { FixJobProcessor, FixWorker, FixWorkerOptions } from "./fix-worker/options.js";
export { startFixWorker } from "./fix-worker/start.js";

export interface StartedWorker {
  readonly fixWorker: FixWorker;
  readonly logger: Logger;
  /** Its /healthz and /metrics server, when AGENT_FIX_WORKER_PORT is set. */
  readonly ops: OpsServer | undefined;
  /** Stops taking jobs, lets runs finish within the grace period, hands the rest back, releases all. */
  stop(): Promise<void>;
}

/** The worker configured from the environment, not yet bound to process signals (src/main.ts shares them). */
export async function startWorkerFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<StartedWorker> {
  const { createProcessorFromEnv } = await import("./processor.js");
  const built = await createProcessorFromEnv(env);
  const fixWorker = await startFixWorker({ ...built.workerOptions, logger: built.logger });
  const ops = built.ops ? await startOpsServer({ ...built.ops, logger: built.logger }) : undefined;
  return {
    fixWorker,
    logger: built.logger,
    ops,
    stop: async () => {
      built.logger.info(
        `finishing runs (grace ${Math.round(built.graceMs / 1000)} s), taking no new jobs; the rest go back to the queue`,
      );
      await fixWorker.shutdown(built.graceMs);
      await ops?.close();
      await built.close();
    },
  };
}

/** `npm run start:worker`: the worker alone, configured from the environment. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<FixWorker> {
  const started = await startWorkerFromEnv(env);
  exitOnSignals(() => started.stop(), { log: (message) => started.logger.info(message) });
  return started.fixWorker;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    // No logger yet (its level comes from the environment being refused): the process's last words.
    console.error(`[worker] cannot start: ${error instanceof Error ? error.message : String(error)}`);
    const hint = (error as { hint?: string }).hint;
    if (hint) console.error(`[worker] ${hint}`);
    process.exit(1);
  });
}
