/**
 * Opening a run: the installation's client for the job's one repository (its tokens revoked when the
 * run closes), the job's status comment, its logger, and a change an earlier attempt of the job kept.
 */
import type { ProbotOctokit } from "probot";
import { type FixJobData, parseFixJobData } from "../../../src/shared/queue/index.js";
import { jobLogger, type Logger } from "../../log.js";
import type { RunJob } from "../../run-end.js";
import { type KeptChange, pendingRun } from "../publish/pending-publishes.js";
import type { RunParts } from "../run-parts.js";
import type { RunCredentials } from "./installation-auth.js";
import { githubStatusReporter, type StatusReporter } from "./status-comment.js";
import { finishingStatus, resumedStatus } from "./status-notes.js";

export interface OpenRun {
  job: RunJob;
  /** The run's name, unique and safe as a file name: its trajectory is `NAME.traj`. */
  name: string;
  parts: RunParts;
  octokit: ProbotOctokit;
  credentials: RunCredentials;
  status: StatusReporter;
  /** Aborts with a CancelReason (src/shared/errors.ts): a cancel, this worker shutting down, its lock lost. */
  signal: AbortSignal;
  log: Logger;
  /** A change an earlier attempt tested but could not push or publish (null: none, or unreadable). */
  kept: KeptChange | null;
  /** Where such a change is kept for this job. */
  keptKey: string;
  /** Looks at the issue again once the cancelled job is done (RunParts.afterCancel). */
  afterCancel(): void;
  /** Revokes the run's tokens, once nothing uses them any more. */
  close(): Promise<void>;
}

/**
 * Mints the run's client (a failure here is the job's: no status can be written yet), reads the change
 * kept before, and opens the status comment (its progress lines say "resumed" after a hand-back, and
 * its final update tells the worker the run is finishing).
 */
export async function openRun(
  job: RunJob,
  signal: AbortSignal,
  finishing: () => void,
  parts: RunParts,
): Promise<OpenRun> {
  const data = parseFixJobData(job.data);
  const log = jobLogger(parts.logger, data, job.id);
  const credentials = parts.auth.forRun(data.installationId, data.repoId);
  let revokeAfter: Promise<void> | undefined;
  const close = () =>
    revokeAfter ? void revokeAfter.finally(() => credentials.revoke()) : credentials.revoke();
  const octokit = await credentials.octokit().catch(async (error: unknown) => {
    await credentials.revoke();
    throw error;
  });
  const keptKey = pendingRun({ id: job.id, timestamp: job.createdAt });
  const kept = await readKept(parts, keptKey, log);
  const name = kept?.run ?? runName(data);
  const status = jobStatus(parts, octokit, data, name, log);
  return {
    job: { ...job, data },
    name,
    parts,
    octokit,
    credentials,
    status: finishingStatus(resumedStatus(status, data.handoffs), finishing),
    signal,
    log,
    kept,
    keptKey,
    afterCancel: () => {
      // It still uses the API client: the tokens are revoked once it is done.
      revokeAfter = parts.afterCancel?.(data, octokit) ?? revokeAfter;
    },
    close: async () => close(),
  };
}

/** The status comment of `job`, whose run is `name` (its trajectory linked once written). */
function jobStatus(
  parts: RunParts,
  octokit: ProbotOctokit,
  job: FixJobData,
  name: string,
  log: Logger,
): StatusReporter {
  return githubStatusReporter(octokit, job, {
    ...parts.trajectoryLinks(name),
    links: parts.links,
    logger: log,
  });
}

/**
 * Writes the status of a job outside any run (its admission's notices, an abandoned job's end): a fresh
 * installation client minted on the host for the job's one repository, revoked once written.
 */
export async function writeJobStatus(
  parts: RunParts,
  job: FixJobData,
  write: (status: StatusReporter) => Promise<void>,
): Promise<void> {
  const credentials = parts.auth.forRun(job.installationId, job.repoId);
  try {
    const octokit = await credentials.octokit();
    await write(jobStatus(parts, octokit, job, runName(job), jobLogger(parts.logger, job)));
  } finally {
    await credentials.revoke();
  }
}

async function readKept(parts: RunParts, key: string, log: Logger): Promise<KeptChange | null> {
  if (!parts.pendingPublishes) return null;
  return parts.pendingPublishes.read(key).catch((err: unknown) => {
    log.warn({ err }, "the change kept from a previous attempt could not be read: running anew");
    return null;
  });
}

/** A run's name, unique and safe as a file name: OWNER-REPO-ISSUE-MILLISECONDS. */
export function runName(job: { owner: string; repo: string; issueNumber: number }, now = Date.now()): string {
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, "_");
  return `${safe(job.owner)}-${safe(job.repo)}-${job.issueNumber}-${now}`;
}
