/**
 * The installation's monthly spend, counted per model call as it is billed (not once the agent
 * returns): a run that throws (its sandbox lost, the worker's engine restarted) still counts what its
 * model calls cost, and a long run's spend shows in the budget while it runs. A round on one of the
 * app's pull requests (review, CI, rebase) counts each call against that pull request's total too
 * (src/shared/queue/pull-costs.ts), which bounds the rounds on it.
 */
import type { FixJobData } from "../../../src/shared/queue/index.js";
import type { PullRequestCosts } from "../../../src/shared/queue/pull-costs.js";
import type { RunUsage } from "../../../src/shared/queue/usage.js";
import type { Logger } from "../../log.js";

/** What a run's model calls report their cost to. */
type SpendCounter = (costUsd: number) => Promise<void>;

/** What of the job says where its spend counts: the installation, and the pull request of a round. */
export type SpendingJob = Pick<FixJobData, "installationId" | "repoId" | "pullNumber">;

export function monthlySpend(
  usage: RunUsage,
  logger: Logger,
  pulls?: PullRequestCosts,
): (job: SpendingJob) => SpendCounter {
  return ({ installationId, repoId, pullNumber }) =>
    async (costUsd) => {
      // A Redis hiccup costs a log line, never the model call that was already paid for.
      await usage.addSpend(installationId, costUsd).catch((err: unknown) => {
        logger.warn({ err, installationId }, "could not add a model call's cost to the installation's month");
      });
      if (pulls && pullNumber !== undefined)
        await pulls.add(repoId, pullNumber, costUsd).catch((err: unknown) => {
          logger.warn({ err, pullNumber }, "could not add a model call's cost to its pull request's total");
        });
    };
}
