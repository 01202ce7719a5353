/**
 * Failing CI on the head commit of the app's own pull request starts a CI round (worker/run/ci-round.ts):
 * a completed check suite or check run that failed, a failing commit status, a completed GitHub Actions
 * workflow run that failed. The job holds ids only (which check runs, suites, workflow runs and status
 * contexts to look at); the worker reads their output with the installation's client. One round per
 * head commit: the first failure of a commit starts it, later events of the same commit are dropped.
 * The app's own check runs never start one. How many rounds a pull request gets is the worker's to
 * decide (the operator's and the repository's `ci.maxRounds`), where the repository's config is read.
 */
import type { Context } from "probot";
import { issueOfFixBranch } from "../../shared/fix-branch.js";
import type { CiFailure } from "../../shared/queue/job.js";
import { ciRoundKey } from "../../shared/queue/keys.js";
import type { EventContext, HandlerDeps } from "./deps.js";
import { targetOf } from "./deps.js";
import { fixIssueOf } from "./pull-request-review.js";
import { startRun } from "./runs.js";

/** Conclusions and states that mean the check failed (cancelled, skipped and neutral do not). */
const FAILED = new Set(["failure", "timed_out", "error"]);

/** A day: events of a head commit come within minutes; the key only has to outlive them. */
const ROUND_KEY_TTL_S = 24 * 60 * 60;

type CiContext =
  | Context<"check_suite.completed">
  | Context<"check_run.completed">
  | Context<"status">
  | Context<"workflow_run.completed">;

interface PullRef {
  number: number;
}

/** What failed, on which commit, and the pull requests GitHub names for it. */
interface Failure {
  headSha: string;
  ids: Omit<CiFailure, "headSha">;
  /** The pull requests of the event; a status names branches instead. */
  pulls: readonly PullRef[];
  branches: readonly string[];
}

const none = { checkRunIds: [], checkSuiteIds: [], workflowRunIds: [], statusContexts: [] };

/** The failure an event reports, or null when it reports none (or it is the app's own check). */
async function failureOf(context: CiContext, deps: HandlerDeps): Promise<Failure | null> {
  const { payload } = context;
  const ownSlug = async () => (await deps.appLogin()).replace(/\[bot\]$/, "");
  if ("check_suite" in payload && payload.check_suite) {
    const suite = payload.check_suite;
    if (!FAILED.has(suite.conclusion ?? "") || suite.app?.slug === (await ownSlug())) return null;
    return {
      headSha: suite.head_sha,
      ids: { ...none, checkSuiteIds: [suite.id] },
      pulls: suite.pull_requests ?? [],
      branches: suite.head_branch ? [suite.head_branch] : [],
    };
  }
  if ("check_run" in payload && payload.check_run) {
    const run = payload.check_run;
    if (!FAILED.has(run.conclusion ?? "") || run.app?.slug === (await ownSlug())) return null;
    return {
      headSha: run.head_sha,
      ids: { ...none, checkRunIds: [run.id] },
      pulls: run.pull_requests ?? [],
      branches: run.check_suite?.head_branch ? [run.check_suite.head_branch] : [],
    };
  }
  if ("workflow_run" in payload && payload.workflow_run) {
    const run = payload.workflow_run;
    if (!FAILED.has(run.conclusion ?? "")) return null;
    return {
      headSha: run.head_sha,
      ids: { ...none, workflowRunIds: [run.id] },
      pulls: (run.pull_requests ?? []).filter((p): p is NonNullable<typeof p> => p !== null),
      branches: run.head_branch ? [run.head_branch] : [],
    };
  }
  if ("state" in payload && "context" in payload && "sha" in payload) {
    if (!FAILED.has(payload.state)) return null;
    return {
      headSha: payload.sha,
      ids: { ...none, statusContexts: [payload.context] },
      pulls: [],
      branches: payload.branches.map((b) => b.name),
    };
  }
  return null;
}

export async function onCiCompleted(context: CiContext, deps: HandlerDeps): Promise<void> {
  const failure = await failureOf(context, deps);
  if (!failure) return;
  const { payload } = context;
  const repo = { owner: payload.repository.owner.login, repo: payload.repository.name };
  // Only the app's fix branches matter: most failures cost no API call.
  const numbers = new Set(failure.pulls.map((p) => p.number));
  for (const branch of failure.branches) {
    if (issueOfFixBranch(branch) === null || failure.pulls.length > 0) continue;
    const { data } = await context.octokit.rest.pulls.list({
      ...repo,
      head: `${repo.owner}:${branch}`,
      state: "open",
    });
    for (const pull of data) numbers.add(pull.number);
  }
  for (const number of numbers) await startCiRound(context, deps, number, failure);
}

/** A CI round of pull request `number`, when it is the app's own, open, and `failure` is on its head. */
async function startCiRound(
  context: CiContext,
  deps: HandlerDeps,
  number: number,
  failure: Failure,
): Promise<void> {
  const { payload } = context;
  const repo = { owner: payload.repository.owner.login, repo: payload.repository.name };
  const { data: pull } = await context.octokit.rest.pulls.get({ ...repo, pull_number: number });
  const issueNumber = await fixIssueOf(pull, payload.repository.full_name, deps);
  if (issueNumber === null || pull.state !== "open") return;
  // A failure of an older commit is not chased: the pull request has moved on.
  if (pull.head.sha !== failure.headSha) {
    context.log.info({ pull: number, sha: failure.headSha }, "CI failure on an older commit: ignored");
    return;
  }
  const target = targetOf(payload, issueNumber);
  if (!target) return;
  const key = ciRoundKey(deps.queue, target.repoId, number, failure.headSha);
  if ((await deps.queue.redis.set(key, "1", "EX", ROUND_KEY_TTL_S, "NX")) !== "OK") {
    context.log.info({ pull: number, sha: failure.headSha }, "a CI round of this commit was started already");
    return;
  }
  context.log.info({ pull: number, issue: issueNumber, sha: failure.headSha }, "CI failed: a CI round");
  const result = await startRun(
    context as EventContext,
    deps,
    target,
    // Nobody asked: the round is the app's own follow-up, so the status names the app, never pinging
    // whoever (or whichever CI account) reported the result.
    await deps.appLogin(),
    "ci",
    async () => undefined,
    { pullNumber: number, ci: { headSha: failure.headSha, ...failure.ids } },
  );
  // A run of the issue is queued or running: it pushes a new commit, whose CI is looked at then.
  if (result.status === "duplicate") await deps.queue.redis.del(key);
}
