/**
 * After a cancel: a start that arrived while the cancel was under way
 * (label removed and added back quickly) was refused as a duplicate of the still-active job, so once the
 * cancelled job has left the active state the issue is looked at again and re-queued if it still asks for a
 * run.
 */

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ProbotOctokit } from "probot";
import { updateStatusComment } from "../../src/shared/github/index.js";
import { enqueueFix, type FixJobData, type FixQueue, fixJobId } from "../../src/shared/queue/index.js";
import { jobLogger, type Logger } from "../log.js";

interface RequeueAfterCancelOptions {
  /** The producer side of the fix queue. */
  producer: FixQueue;
  /** The label that starts a run (AGENT_FIX_LABEL). */
  label: string;
  logger: Logger;
}

/**
 * The processor's `afterCancel`: not awaited by the job, failures logged; the promise tells the job
 * when `octokit` is no longer used (its token is revoked then).
 */
export function requeueAfterCancel(options: RequeueAfterCancelOptions) {
  const { producer, label, logger } = options;
  return (job: FixJobData, octokit: ProbotOctokit): Promise<void> | undefined => {
    // A cancelled review, CI or rebase round is not redone as an issue run (that would replace the reviewed branch).
    if (job.trigger === "review" || job.trigger === "ci" || job.trigger === "rebase") return undefined;
    const jobId = fixJobId(job.repoId, job.issueNumber);
    // Poll until the cancelled job has left the active state, then ask GitHub what the issue wants now.
    return (async () => {
      for (let i = 0; i < 100; i++) {
        const state = await producer.queue.getJobState(jobId);
        if (state !== "active") break;
        await sleep(100);
      }
      const { data: issue } = await octokit.rest.issues.get({
        owner: job.owner,
        repo: job.repo,
        issue_number: job.issueNumber,
      });
      const labelled = issue.labels.some((l) => (typeof l === "string" ? l : l.name) === label);
      if (issue.state !== "open" || !labelled) return;
      const result = await enqueueFix(producer, { ...job, deliveryId: `relabel-${randomUUID()}` });
      if (result.status === "queued" && job.statusCommentId) {
        await updateStatusComment(
          octokit,
          { owner: job.owner, repo: job.repo },
          job.statusCommentId,
          { kind: "progress", phase: "queued" },
          { requestedBy: job.requestedBy },
        );
      }
    })().catch((err: unknown) =>
      jobLogger(logger, job, jobId).error({ err }, "re-check after cancel failed"),
    );
  };
}
