/**
 * One job of the fix queue, as the worker runs it:
 *   1. open the run: the installation's client, the status comment, a change an earlier attempt kept
 *   2. read the issue, and end here when what queued the job no longer holds on GitHub
 *   3. run one of the siblings: publish the change an earlier attempt tested (resume-publishing.ts), a
 *      review round on the app's pull request (review-round.ts), a CI round when its checks failed
 *      (ci-round.ts), a rebase round bringing it up to date with its base (rebase-round.ts), or the fix
 *      run itself (run-fix.ts)
 *   4. end: however the run went, the status comment says so, and the RunEnd tells the queue what to do
 */
import { CancelledError } from "../../src/shared/errors.js";
import { githubFailure } from "../../src/shared/github/index.js";
import { setupSecretsFor } from "../config/worker-env.js";
import { completed, type JobResult, type RunEnd, type RunJob, type RunOutcome } from "../run-end.js";
import { ciRound } from "./ci-round.js";
import { endCheckRun, openFailure, runFailure } from "./end/run-failure.js";
import { conflictingPull } from "./keep-up/conflicting-pull.js";
import { type OpenRun, openRun } from "./open/open-run.js";
import { keepPeoplesCommits } from "./open/peoples-commits.js";
import { noLongerWanted } from "./open/still-wanted.js";
import { fixTask, type Issue } from "./open/task.js";
import { SUPERSEDED_ENDING } from "./publish/left-check-runs.js";
import { rebaseRound } from "./rebase-round.js";
import { resumeKept } from "./resume-publishing.js";
import { reviewRound } from "./review-round.js";
import { runFix } from "./run-fix.js";
import type { RunParts } from "./run-parts.js";

export async function runJob(
  job: RunJob,
  signal: AbortSignal,
  finishing: () => void,
  parts: RunParts,
): Promise<RunEnd> {
  const run = await openRun(job, signal, finishing, parts).catch((error: unknown) => error as Error);
  if (run instanceof Error) return openFailure(run, job);
  try {
    const outcome = await runOnce(run);
    await countOnPullRequest(run, outcome);
    run.log.info(`${outcome.kind}${outcome.kind === "pull_request" ? ` ${outcome.url}` : ""}`);
    await lookAgainAfterLateCancel(run);
    return completed(jobResult(outcome, await conflictingPull(run, outcome)));
  } catch (error) {
    return await runFailure(error, run);
  } finally {
    await run.close();
  }
}

async function runOnce(run: OpenRun): Promise<RunOutcome> {
  const early = await run.parts.pendingCancel(run.job.id);
  if (early) throw new CancelledError("cancelled before start", early);
  // An earlier attempt whose worker died (or lost the job) may have left its check run in progress.
  await endCheckRun(run, SUPERSEDED_ENDING);
  const issue = await readIssue(run);
  const stale = await noLongerWanted(
    run.octokit,
    run.job.data,
    issue.now,
    run.parts.startRules,
    run.parts.identity.name,
  );
  if (stale) return await nothingDone(run, stale);
  if (run.kept) return await resumeKept(run, run.kept, issue);
  if (run.job.data.trigger === "review") return await reviewRound(run, issue);
  if (run.job.data.trigger === "ci") return await ciRound(run, issue);
  if (run.job.data.trigger === "rebase") return await rebaseRound(run, issue);
  return await runFix(run, issue, await keepPeoplesCommits(run, fixTask(run, issue)));
}

/**
 * The repository by id (the one the job was made for, under its current name: renamed or transferred
 * since, never whichever repository holds the job's name now) and the issue, as GitHub has them now.
 */
async function readIssue(run: OpenRun): Promise<Issue & { now: Parameters<typeof noLongerWanted>[2] }> {
  const { owner, repo, issueNumber, repoId, installationId } = run.job.data;
  const [repository, issue] = await Promise.all([
    run.octokit.request("GET /repositories/{repository_id}", { repository_id: repoId }),
    run.octokit.rest.issues.get({ owner, repo, issue_number: issueNumber }),
  ]).catch((error: unknown) => {
    throw githubFailure(error, `reading ${owner}/${repo}#${issueNumber} (repository id ${repoId})`);
  });
  const fullName = repository.data.full_name;
  return {
    number: issueNumber,
    title: issue.data.title,
    body: issue.data.body ?? null,
    now: issue.data,
    repository: {
      id: repoId,
      installationId,
      fullName,
      cloneUrl: repository.data.clone_url,
      defaultBranch: repository.data.default_branch,
    },
    // By id and installation; the current name only for the log when the operator's entry names it otherwise.
    setupSecrets: setupSecretsFor(
      run.parts.setupSecrets,
      { id: repoId, installationId },
      fullName,
      (message) => run.log.warn(message),
    ),
  };
}

/**
 * The end of a run whose event no longer holds: before any clone, sandbox or model request, and with
 * no push (a change an earlier attempt kept for publishing is dropped too).
 */
async function nothingDone(run: OpenRun, reason: string): Promise<RunOutcome> {
  run.log.info({ reason }, "what queued the run no longer holds on GitHub: nothing done");
  if (run.kept) {
    await run.parts.pendingPublishes?.drop(run.keptKey).catch((err: unknown) => {
      run.log.warn({ err }, "could not drop the change kept from an earlier attempt");
    });
  }
  await run.status.failed(reason);
  return { kind: "no_pull_request", reason, trajectory: null, timings: {} };
}

/**
 * The model cost of a run that opened (or updated) the issue's pull request, added to that pull
 * request's total once it is known: a round's calls count as they are billed (solve/monthly-spend.ts).
 */
async function countOnPullRequest(run: OpenRun, outcome: RunOutcome): Promise<void> {
  if (outcome.kind !== "pull_request" || run.job.data.pullNumber !== undefined) return;
  const cost = outcome.trajectory?.info.model_stats.instance_cost ?? 0;
  await run.parts.pullCosts?.add(run.job.data.repoId, outcome.number, cost).catch((err: unknown) => {
    run.log.warn({ err }, "could not add the run's cost to its pull request's total");
  });
}

/**
 * A cancel that came as the run finished found nothing left to stop, and a start right after it was
 * refused as a duplicate of this still-active job: look at the issue again once it is done.
 */
async function lookAgainAfterLateCancel(run: OpenRun): Promise<void> {
  const late = await run.parts.pendingCancel(run.job.id).catch((err: unknown) => {
    run.log.warn({ err }, "could not check for a cancel that came as the run finished");
    return null;
  });
  if (late) run.afterCancel();
}

function jobResult(outcome: RunOutcome, conflicting: number | undefined): JobResult {
  return {
    kind: outcome.kind,
    ...(outcome.kind === "pull_request"
      ? { url: outcome.url, number: outcome.number }
      : { reason: outcome.reason }),
    exitStatus: outcome.trajectory?.info.exit_status ?? null,
    timings: outcome.timings,
    ...(conflicting === undefined ? {} : { conflicting }),
  };
}
