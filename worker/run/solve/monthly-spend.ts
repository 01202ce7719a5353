/**
 * The installation's monthly spend, counted per model call as it is billed (not once the agent
 * returns): a run that throws (its sandbox lost, the worker's engine restarted) still counts what its
 * model calls cost, and a long run's spend shows in the budget while it runs.
 */
import type { RunUsage } from "../../../src/shared/queue/usage.js";
import type { Logger } from "../../log.js";

/** What a run's model calls report their cost to. */
type SpendCounter = (costUsd: number) => Promise<void>;

export function monthlySpend(usage: RunUsage, logger: Logger): (installationId: number) => SpendCounter {
  return (installationId) => async (costUsd) => {
    // A Redis hiccup costs a log line, never the model call that was already paid for.
    await usage.addSpend(installationId, costUsd).catch((err: unknown) => {
      logger.warn({ err, installationId }, "could not add a model call's cost to the installation's month");
    });
  };
}
