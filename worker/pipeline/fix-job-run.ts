/**
 * The run of a fix job (fix-job.ts) once its client and status are set up: the issue read, then either
 * the change an earlier attempt kept published, or the whole pipeline (run.ts) with its input.
 */

import { CancelledError } from "../../src/errors.js";
import { githubFailure } from "../../src/github/index.js";
import { GITHUB_COM_LINKS } from "../../src/github/inert-links.js";
import type { JobContext, ProcessorDeps, RunContext } from "./fix-job-context.js";
import { keepForRetry } from "./pending-publish.js";
import { resumePublishing } from "./resume-publish.js";
import { loadReviewRun } from "./review.js";
import { runFix } from "./run.js";
import { noLongerWanted } from "./still-wanted.js";
import type { PipelineRepoConfig, Publisher, RunInput, RunOutcome } from "./types.js";

/**
 * The run itself: publishing the change kept before, or the whole pipeline; nothing at all when what
 * queued the job is no longer true on GitHub (every attempt, a retry or a handed-back run too).
 */
export async function runOrResume<C extends PipelineRepoConfig>(
  deps: ProcessorDeps<C>,
  ctx: JobContext,
  runCtx: RunContext,
): Promise<RunOutcome> {
  const { data, log } = ctx;
  const { octokit, kept, pendingKey, run } = runCtx;
  const early = await deps.pendingCancel(ctx.job.id ?? "");
  if (early) throw new CancelledError("cancelled before start", early);
  const { owner, repo, issueNumber, repoId } = data;
  // By id: the repository the job was made for, under its current name (renamed or transferred since),
  // never whichever repository holds the job's name now; a deleted one is not found.
  const [repository, issue] = await Promise.all([
    octokit.request("GET /repositories/{repository_id}", { repository_id: repoId }),
    octokit.rest.issues.get({ owner, repo, issue_number: issueNumber }),
  ]).catch((error: unknown) => {
    throw githubFailure(error, `reading ${owner}/${repo}#${issueNumber} (repository id ${repoId})`);
  });
  const stale = await noLongerWanted(octokit, data, issue.data, deps.startRules);
  if (stale) return await nothingDone(deps, ctx, runCtx, stale);
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
          links: deps.links ?? GITHUB_COM_LINKS,
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

/**
 * The end of a run whose event no longer holds: before any clone, sandbox or model request, and with
 * no push (a change an earlier attempt kept for publishing is dropped too).
 */
async function nothingDone<C extends PipelineRepoConfig>(
  deps: ProcessorDeps<C>,
  ctx: JobContext,
  runCtx: RunContext,
  reason: string,
): Promise<RunOutcome> {
  ctx.log.info({ reason }, "what queued the run no longer holds on GitHub: nothing done");
  if (runCtx.kept) {
    await deps.pendingPublishes?.drop(runCtx.pendingKey).catch((err: unknown) => {
      ctx.log.warn({ err }, "could not drop the change kept from an earlier attempt");
    });
  }
  await runCtx.status.failed(reason);
  return { kind: "no_pull_request", reason, trajectory: null, timings: {} };
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
  const { issueNumber } = data;
  const { run, pendingKey } = runCtx;
  const pending = deps.pendingPublishes;
  return {
    jobId: ctx.job.id ?? "",
    issue: { number: issueNumber, title: issue.title, body: issue.body ?? null },
    repository: {
      id: data.repoId,
      installationId: data.installationId,
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
    setupSecrets: deps.setupSecrets(
      { id: data.repoId, installationId: data.installationId },
      repository.full_name,
    ),
    identity: deps.identity,
    links: deps.links ?? GITHUB_COM_LINKS,
    sandboxes: deps.sandboxes,
    agentFor: (config) => deps.agent(config, data, run),
    publisher,
    status: runCtx.status,
    signal: ctx.signal,
    keepUnpushed: pending && ((draft, unpushed) => pending.save(pendingKey, { run, draft, unpushed })),
    logger: ctx.log,
    ...(deps.workRoot ? { workRoot: deps.workRoot } : {}),
    ...(deps.intake ? { intake: deps.intake } : {}),
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
