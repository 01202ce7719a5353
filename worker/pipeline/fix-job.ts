/**
 * One fix job as BullMQ runs it (steps 3 and 12 of docs/architecture.md), over parts the composition root
 * (worker/processor.ts) built: mints the installation's client, runs the pipeline, and maps errors to
 * BullMQ: retryable ones are retried (with a status line saying so), the rest fail for good.
 */

import type { Job } from "bullmq";
import type { ProbotOctokit } from "probot";
import { GITHUB_COM_LINKS } from "../../src/github/inert-links.js";
import { type FixJobData, parseFixJobData } from "../../src/queue/index.js";
import { createWorkerLogger, jobLogger, type Logger } from "../log.js";
import type { InstallationAuth } from "./auth.js";
import { abandonedReason, type FinalizeAbandoned } from "./final-status.js";
import type { JobContext, ProcessorDeps, RunContext } from "./fix-job-context.js";
import { queueError, reportFailure } from "./fix-job-failure.js";
import { runOrResume } from "./fix-job-run.js";
import { finishingStatus, resumedStatus } from "./handback.js";
import { type KeptChange, type PendingPublishStore, pendingRun } from "./pending-publish.js";
import type { PipelineRepoConfig, RunOutcome, RunTimings } from "./types.js";

export type { ProcessorDeps } from "./fix-job-context.js";

/** Kept by BullMQ as the job's return value: what happened, and where the time went. */
export interface JobResult {
  kind: RunOutcome["kind"];
  url?: string;
  number?: number;
  reason?: string;
  exitStatus: string | null;
  timings: RunTimings;
}

export function createFixProcessor<C extends PipelineRepoConfig>(deps: ProcessorDeps<C>) {
  const logger = deps.logger ?? createWorkerLogger();
  /** `finishing` is called once the run's outcome is reported: a shutdown then waits for it. */
  return async function processFixJob(
    job: Job<FixJobData>,
    signal: AbortSignal,
    finishing?: () => void,
  ): Promise<JobResult> {
    const data = parseFixJobData(job.data);
    const log = jobLogger(logger, data, job.id);
    // Every token of the run is for its one repository, and revoked when the run ends.
    const credentials = deps.auth.forRun(data.installationId, data.repoId);
    let revokeAfter: Promise<void> | undefined;
    const afterCancel = (octokit: ProbotOctokit) => {
      const pending = deps.afterCancel?.(data, octokit);
      if (pending) revokeAfter = pending; // it still uses the API client: revoke once it is done
    };
    try {
      return await processWith(deps, { job, data, credentials, signal, afterCancel, finishing, log });
    } finally {
      if (revokeAfter) void revokeAfter.finally(() => credentials.revoke());
      else await credentials.revoke();
    }
  };
}

async function processWith<C extends PipelineRepoConfig>(
  deps: ProcessorDeps<C>,
  ctx: JobContext,
): Promise<JobResult> {
  const { job, data, credentials, log } = ctx;
  const octokit = await credentials.octokit().catch((error: unknown) => {
    throw queueError(error, job);
  });
  // A change an earlier attempt tested but could not push or publish: this attempt only does that.
  const pendingKey = pendingRun(job);
  const kept = await readKeptChange(deps.pendingPublishes, pendingKey, log);
  const run = kept?.run ?? runName(data);
  const status = finishingStatus(
    resumedStatus(deps.status(octokit, data, run), data.handoffs),
    ctx.finishing,
  );
  const runCtx: RunContext = {
    octokit,
    kept,
    pendingKey,
    run,
    status,
    links: deps.links ?? GITHUB_COM_LINKS,
  };
  try {
    const outcome = await runOrResume(deps, ctx, runCtx);
    log.info(`${outcome.kind}${outcome.kind === "pull_request" ? ` ${outcome.url}` : ""}`);
    // A cancel that came as the run finished found nothing left to stop, and a start right after it
    // was refused as a duplicate of this still-active job: look at the issue again once it is done.
    const lateCancel = await deps.pendingCancel(job.id ?? "").catch((err: unknown) => {
      log.warn({ err }, "could not check for a cancel that came as the run finished");
      return null;
    });
    if (lateCancel) ctx.afterCancel(octokit);
    return jobResult(outcome);
  } catch (error) {
    throw await reportFailure(error, deps.pendingPublishes, ctx, runCtx);
  }
}

async function readKeptChange(
  pending: PendingPublishStore | undefined,
  pendingKey: string,
  log: Logger,
): Promise<KeptChange | null | undefined> {
  return pending?.read(pendingKey).catch((err: unknown) => {
    log.warn({ err }, "the change kept from a previous attempt could not be read: running anew");
    return null;
  });
}

function jobResult(outcome: RunOutcome): JobResult {
  return {
    kind: outcome.kind,
    ...(outcome.kind === "pull_request"
      ? { url: outcome.url, number: outcome.number }
      : { reason: outcome.reason }),
    exitStatus: outcome.trajectory?.info.exit_status ?? null,
    timings: outcome.timings,
  };
}

/**
 * The final status of a job that ended with no processor to write it: a fresh installation client
 * (minted on the host), the job's status comment, the reason in a maintainer's words.
 */
export function finalizeAbandonedWith(
  auth: InstallationAuth,
  status: ProcessorDeps["status"],
): FinalizeAbandoned {
  return async (job, abandonment) => {
    const credentials = auth.forRun(job.installationId, job.repoId);
    try {
      const octokit = await credentials.octokit();
      await status(octokit, job, runName(job)).failed(abandonedReason(abandonment));
    } finally {
      await credentials.revoke();
    }
  };
}

/** A run's name, unique and safe as a file name: OWNER-REPO-ISSUE-MILLISECONDS. */
export function runName(job: FixJobData, now = Date.now()): string {
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, "_");
  return `${safe(job.owner)}-${safe(job.repo)}-${job.issueNumber}-${now}`;
}
