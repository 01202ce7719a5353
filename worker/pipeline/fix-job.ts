/**
 * One fix job as BullMQ runs it (steps 3 and 12 of docs/architecture.md), over parts the composition root
 * (worker/processor.ts) built: mints the installation's client, runs the pipeline, and maps errors to
 * BullMQ: retryable ones are retried (with a status line saying so), the rest fail for good.
 */
import type { Job } from "bullmq";
import { UnrecoverableError } from "bullmq";
import type { ProbotOctokit } from "probot";
import { engineFault } from "../../sandbox/engine-fault.js";
import type { SandboxProvider } from "../../src/contracts.js";
import { AgentFixError, CancelledError } from "../../src/errors.js";
import { githubFailure } from "../../src/github/index.js";
import { neutralise } from "../../src/github/neutralise.js";
import { type FixJobData, parseFixJobData } from "../../src/queue/index.js";
import { createWorkerLogger, jobLogger, type Logger } from "../log.js";
import type { AgentRunner } from "./agent.js";
import type { InstallationAuth, RunCredentials } from "./auth.js";
import { type AbortReason, decodeAbortReason, markCancelled } from "./cancel.js";
import type { CommitIdentity } from "./commit.js";
import { abandonedReason, type FinalizeAbandoned, markStatusFinal } from "./final-status.js";
import { finishingStatus, handedBackNote, RunHandedBack, RunLockLost, resumedStatus } from "./handback.js";
import { type KeptChange, keepForRetry, type PendingPublishStore, pendingRun } from "./pending-publish.js";
import { resumePublishing } from "./resume-publish.js";
import { retryNote } from "./retry-note.js";
import { loadReviewRun } from "./review.js";
import { runFix } from "./run.js";
import type {
  PipelineRepoConfig,
  Publisher,
  RunInput,
  RunOutcome,
  RunTimings,
  StatusReporter,
} from "./types.js";

/** Kept by BullMQ as the job's return value: what happened, and where the time went. */
export interface JobResult {
  kind: RunOutcome["kind"];
  url?: string;
  number?: number;
  reason?: string;
  exitStatus: string | null;
  timings: RunTimings;
}

/**
 * What one job needs, built once per process (or per test). `C` is the repository config loadConfig
 * returns; the same value reaches agent().
 */
export interface ProcessorDeps<C extends PipelineRepoConfig = PipelineRepoConfig> {
  auth: InstallationAuth;
  sandboxes: SandboxProvider;
  /** The app's commit identity (`SLUG[bot]`). */
  identity: CommitIdentity;
  /** The status comment of a job. `run` names this run: its trajectory is `run.traj` (see runName). */
  status(octokit: ProbotOctokit, job: FixJobData, run: string): StatusReporter;
  publisher(octokit: ProbotOctokit, job: FixJobData, run: string): Publisher;
  /** The agent for this repository's config (model, limits, tools). */
  agent(config: C, job: FixJobData, run: string): Promise<AgentRunner>;
  /**
   * The repository's config as it is on the default branch, read through the installation's client:
   * never from the checkout, which for a review run holds the agent's own branch.
   */
  loadConfig(
    job: FixJobData,
    source: { api: ProbotOctokit; orgApi: ProbotOctokit | null; defaultBranch: string },
  ): Promise<C>;
  /** Operator-configured setup secrets for `owner/repo` (never the GitHub token). */
  setupSecrets(fullName: string): Record<string, string>;
  /** A cancel that arrived before this worker held the job. */
  pendingCancel(jobId: string): Promise<AbortReason | null>;
  /**
   * Called for a cancelled job once it has left the active state: a start that arrived while the
   * cancel was under way (label removed and added back quickly) was refused as a duplicate then,
   * so the issue is looked at again and re-queued if it still asks for a run (see requeue.ts).
   */
  afterCancel?(job: FixJobData, octokit: ProbotOctokit): Promise<void> | undefined;
  workRoot?: string;
  /** The process's logger; each job logs through a child of it (jobLogger). */
  logger?: Logger;
  /** Tested changes whose push or publishing failed: the job's next attempt only pushes and publishes them. */
  pendingPublishes?: PendingPublishStore;
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

/** One job as processFixJob holds it. */
interface JobContext {
  job: Job<FixJobData>;
  data: FixJobData;
  credentials: RunCredentials;
  signal: AbortSignal;
  afterCancel: (octokit: ProbotOctokit) => void;
  finishing: (() => void) | undefined;
  log: Logger;
}

/** What processWith set up before the run: the client, the change kept before, the run's name and status. */
interface RunContext {
  octokit: ProbotOctokit;
  kept: KeptChange | null | undefined;
  pendingKey: string;
  run: string;
  status: StatusReporter;
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
  const runCtx: RunContext = { octokit, kept, pendingKey, run, status };
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

/** The run itself: publishing the change kept before, or the whole pipeline. */
async function runOrResume<C extends PipelineRepoConfig>(
  deps: ProcessorDeps<C>,
  ctx: JobContext,
  runCtx: RunContext,
): Promise<RunOutcome> {
  const { data, log } = ctx;
  const { octokit, kept, pendingKey, run } = runCtx;
  const early = await deps.pendingCancel(ctx.job.id ?? "");
  if (early) throw new CancelledError("cancelled before start", early);
  const { owner, repo, issueNumber } = data;
  const [repository, issue] = await Promise.all([
    octokit.rest.repos.get({ owner, repo }),
    octokit.rest.issues.get({ owner, repo, issue_number: issueNumber }),
  ]).catch((error: unknown) => {
    throw githubFailure(error, `reading ${owner}/${repo}#${issueNumber}`);
  });
  const pending = deps.pendingPublishes;
  const publisher = pending
    ? keepForRetry(deps.publisher(octokit, data, run), pending, pendingKey, run, log)
    : deps.publisher(octokit, data, run);
  if (kept) log.info(`${kept.unpushed ? "pushing and " : ""}publishing the change kept before`);
  const read: ReadIssue = { repository: repository.data, issue: issue.data };
  return kept
    ? await resumePublishing({
        kept,
        publisher,
        status: runCtx.status,
        requestedBy: data.requestedBy,
        push: {
          cloneUrl: read.repository.clone_url,
          identity: deps.identity,
          token: (purpose) => ctx.credentials.token(purpose),
          signal: ctx.signal,
          workRoot: deps.workRoot,
        },
        store: pending,
        key: pendingKey,
        logger: log,
      })
    : await runFix(await runFixInput(deps, ctx, runCtx, read, publisher));
}

/** The repository and the issue as the installation's client read them. */
interface ReadIssue {
  repository: { full_name: string; clone_url: string; default_branch: string };
  issue: { title: string; body?: string | null | undefined };
}

async function runFixInput<C extends PipelineRepoConfig>(
  deps: ProcessorDeps<C>,
  ctx: JobContext,
  runCtx: RunContext,
  { repository, issue }: ReadIssue,
  publisher: Publisher,
): Promise<RunInput<C>> {
  const { data, credentials } = ctx;
  const { owner, repo, issueNumber } = data;
  const { run, pendingKey } = runCtx;
  const pending = deps.pendingPublishes;
  return {
    jobId: ctx.job.id ?? "",
    issue: { number: issueNumber, title: issue.title, body: issue.body ?? null },
    repository: {
      fullName: repository.full_name,
      cloneUrl: repository.clone_url,
      defaultBranch: repository.default_branch,
    },
    requestedBy: data.requestedBy,
    token: (purpose) => credentials.token(purpose),
    // The config is read through the contents API, with a token that may only read contents.
    loadConfig: async () =>
      deps.loadConfig(data, {
        api: await credentials.contentsReader(),
        orgApi: await credentials.orgContentsReader(),
        defaultBranch: repository.default_branch,
      }),
    setupSecrets: deps.setupSecrets(`${owner}/${repo}`),
    identity: deps.identity,
    sandboxes: deps.sandboxes,
    agentFor: (config) => deps.agent(config, data, run),
    publisher,
    status: runCtx.status,
    signal: ctx.signal,
    keepUnpushed: pending && ((draft, unpushed) => pending.save(pendingKey, { run, draft, unpushed })),
    logger: ctx.log,
    ...(deps.workRoot ? { workRoot: deps.workRoot } : {}),
    // Review runs: the pull request's branch, and the issue plus the review as the task.
    ...(data.trigger === "review"
      ? await loadReviewRun(
          runCtx.octokit,
          data,
          { number: issueNumber, title: issue.title, body: issue.body ?? null },
          deps.identity.name,
        )
      : {}),
  };
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
 * Writes the final (or retrying) status for a run's error and returns what BullMQ is to see: a shutdown
 * hands the job back, a cancel and an unrecoverable error fail it for good, a retryable one is retried.
 */
async function reportFailure(
  failure: unknown,
  pending: PendingPublishStore | undefined,
  { job, signal, afterCancel, log }: JobContext,
  { octokit, kept, pendingKey, status }: RunContext,
): Promise<Error> {
  // A sandbox lost to the Docker engine going away says so, and is retried.
  const error = engineFault(failure);
  const abort =
    (error instanceof CancelledError ? error.abort : null) ??
    (signal.aborted ? decodeAbortReason(signal.reason) : null);
  // The job went back to the queue without us (our lock lapsed): the run that takes it owns the status.
  if (abort?.kind === "lock_lost") return new RunLockLost();
  if (abort?.kind === "shutdown") {
    // Not cancelled: the worker puts the job back in the queue for another worker. An unreadable store
    // only changes the note's wording, and the read above already logged why.
    const changeKept = Boolean(kept ?? (await pending?.read(pendingKey).catch(() => null)));
    await finalStatus(() => status.progress("queued", { note: handedBackNote(changeKept) }), log);
    return new RunHandedBack();
  }
  if (abort) {
    const written = await finalStatus(() => status.cancelled(abort.by), log);
    afterCancel(octokit);
    const cancelled = markCancelled(new UnrecoverableError(`cancelled by ${abort.by}`));
    return written ? markStatusFinal(cancelled) : cancelled;
  }
  const wrapped = queueError(error, job);
  if (wrapped instanceof UnrecoverableError) {
    // Unmarked when the update failed: the worker's 'failed' listener tries again.
    // Error messages can quote the model's diff (file names): no live mentions or keywords.
    if (await finalStatus(() => status.failed(neutralise(describe(error))), log)) markStatusFinal(wrapped);
  } else {
    log.warn(`retrying after ${describe(error)}`);
    const attempt = { next: job.attemptsMade + 2, of: job.opts.attempts ?? 1 };
    await finalStatus(
      // Only an AgentFixError is retried (queueError).
      () => status.progress("cloning", { note: retryNote(error as AgentFixError, attempt) }),
      log,
    );
  }
  return wrapped;
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

/** A status update must never hide the run's real error. Whether it was written. */
async function finalStatus(update: () => Promise<void>, log: Logger): Promise<boolean> {
  return update().then(
    () => true,
    (err: unknown) => {
      log.error({ err }, "status comment update failed");
      return false;
    },
  );
}

function describe(error: unknown): string {
  if (error instanceof AgentFixError) return error.describe();
  return error instanceof Error ? error.message : String(error);
}

/** Retryable errors stay as they are while attempts remain; everything else becomes UnrecoverableError. */
function queueError(error: unknown, job: Job<FixJobData>): Error {
  const attemptsLeft = (job.opts.attempts ?? 1) - (job.attemptsMade + 1) > 0;
  if (error instanceof AgentFixError && error.retryable && attemptsLeft) return error;
  if (error instanceof UnrecoverableError) return error;
  const wrapped = new UnrecoverableError(describe(error));
  (wrapped as Error & { cause?: unknown }).cause = error;
  return wrapped;
}
