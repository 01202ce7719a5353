/**
 * `/agent-fix help` and `/agent-fix status`: one reply each, to anyone who may read the repository,
 * never a job enqueued or changed. Help lists the commands the app understands; status tells the state
 * of the issue's run: queued (and where in the queue, when it is among the next ones), running (its
 * step, as its status comment shows it; the cost so far, when the run's trajectory is stored), or none
 * and how to start one; and, when the issue has the app's pull request, what every run on it has cost. Each person gets at most INFO_REPLIES_PER_HOUR answers per issue an hour.
 */
import { fixBranch } from "../../shared/fix-branch.js";
import type { GitHubApi } from "../../shared/github/api.js";
import { httpStatus } from "../../shared/github/api.js";
import { STATUS_MARKER } from "../../shared/github/status.js";
import type { FixJobData } from "../../shared/queue/job.js";
import { fixJobId } from "../../shared/queue/job.js";
import { infoRepliesKey } from "../../shared/queue/keys.js";
import { pullRequestCosts } from "../../shared/queue/pull-costs.js";
import { trajectoryUrl } from "../../shared/trajectory-links.js";
import type { TrajectoryStore } from "../../shared/trajectory-store.js";
import type { EventContext, HandlerDeps, IssueTarget } from "./deps.js";

export type InfoCommand = "help" | "status";

/** Answers per person, issue and hour: past it the command is ignored (a comment loop costs nothing). */
export const INFO_REPLIES_PER_HOUR = 6;
const HOUR_S = 60 * 60;
/** How far into the queue a position is looked for: past it the run is "queued" without one. */
const POSITION_DEPTH = 200;
/** How many of the newest stored runs are looked through for a running one's cost. */
const RECENT_RUNS = 100;

/** The reply to `help`: every command, one line each. */
export function helpText(settings: HandlerDeps["settings"]): string {
  const c = settings.command;
  return [
    "agent-fix understands these commands (the first line of a comment):",
    "",
    `- \`${c}\` on an issue: start a run that opens a tested draft pull request (like adding the \`${settings.label}\` label); people with write access`,
    `- \`${c}\` on agent-fix's pull request, with what to change on the lines after it: a new commit addressing it; people with write access`,
    `- \`${c} stop\`: cancel the issue's run (removing the \`${settings.label}\` label does too); people with write access`,
    `- \`${c} status\`: the state of the issue's run: queued, running (its step and cost so far) or none; and what every run on its pull request has cost`,
    `- \`${c} help\`: this list`,
    "",
    "Requesting changes in a review of agent-fix's pull request also starts a round that addresses the review.",
  ].join("\n");
}

/** Where a run of the issue is, as the reply tells it. */
type RunState =
  | { kind: "none" }
  | { kind: "queued"; position: number | null }
  | { kind: "running"; step: string | null; link: string | null; costUsd: number | null };

/** Whether `login` may still be answered on this issue this hour (counts this answer). */
export async function infoReplyAllowed(
  deps: HandlerDeps,
  target: IssueTarget,
  login: string,
): Promise<boolean> {
  const key = infoRepliesKey(deps.queue, target.repoId, target.issueNumber, login);
  const [[, count]] = (await deps.queue.redis.multi().incr(key).expire(key, HOUR_S, "NX").exec()) as [
    [Error | null, number],
  ];
  return count <= INFO_REPLIES_PER_HOUR;
}

/** The reply to `status` for `target`'s issue (on a pull request: the issue it fixes). */
export async function statusText(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  pullNumber?: number | null,
): Promise<string> {
  const [run, pull] = await Promise.all([
    runText(context, deps, target),
    pullNumber ? pullCostText(deps, target, pullNumber) : null,
  ]);
  return pull ? `${run} ${pull}` : run;
}

async function runText(context: EventContext, deps: HandlerDeps, target: IssueTarget): Promise<string> {
  const state = await runState(context, deps, target);
  const c = deps.settings.command;
  switch (state.kind) {
    case "none":
      return `No agent-fix run is queued or running for #${target.issueNumber}. Add the \`${deps.settings.label}\` label to the issue or comment \`${c}\` on it to start one.`;
    case "queued":
      return `A run for #${target.issueNumber} is queued${state.position ? ` (number ${state.position} in the queue)` : ""}; it starts when a worker is free.`;
    case "running":
      return [
        `A run for #${target.issueNumber} is running${state.step ? `: ${state.step}` : ""}.`,
        ...(state.costUsd !== null ? [`Model cost so far: $${state.costUsd.toFixed(4)}.`] : []),
        ...(state.link ? [`Follow it here: ${state.link}`] : []),
      ].join(" ");
  }
}

/**
 * What every run on the app's pull request has cost so far, together (the worker counts it, and stops
 * starting rounds on it at the operator's ceiling).
 */
async function pullCostText(deps: HandlerDeps, target: IssueTarget, pullNumber: number): Promise<string> {
  const total = await pullRequestCosts(deps.queue.redis, deps.queue).total(target.repoId, pullNumber);
  return `Model cost of every run on pull request #${pullNumber} so far: $${total.toFixed(4)}.`;
}

/**
 * The app's open pull request for the issue: found by its branch (`agent-fix/issue-N` in the repository
 * itself), or null when it has none open.
 */
export async function openPullOf(api: GitHubApi, target: IssueTarget): Promise<number | null> {
  const { data } = await api.rest.pulls.list({
    owner: target.owner,
    repo: target.repo,
    head: `${target.owner}:${fixBranch(target.issueNumber)}`,
    state: "open",
  });
  return data[0]?.number ?? null;
}

async function runState(context: EventContext, deps: HandlerDeps, target: IssueTarget): Promise<RunState> {
  const { queue } = deps.queue;
  const job = await queue.getJob(fixJobId(target.repoId, target.issueNumber));
  const state = job ? await job.getState() : "unknown";
  if (!job || !["waiting", "prioritized", "delayed", "active", "waiting-children"].includes(state))
    return { kind: "none" };
  if (state !== "active") {
    // Plain waiting jobs are taken before prioritized ones, each list from its oldest or lowest first.
    const next = await queue.getJobs(["waiting", "prioritized"], 0, POSITION_DEPTH - 1, true);
    const at = next.findIndex((j) => j?.id === job.id);
    return { kind: "queued", position: at < 0 ? null : at + 1 };
  }
  const comment = await statusComment(context.octokit, target, job.data);
  const run = await deps.runOf?.(target.repoId, target.issueNumber).catch(() => null);
  return {
    kind: "running",
    step: comment?.step ?? null,
    link: run?.url ?? comment?.url ?? null,
    costUsd: run?.costUsd ?? null,
  };
}

type CommentReader = GitHubApi & {
  rest: {
    issues: {
      getComment(params: {
        owner: string;
        repo: string;
        comment_id: number;
      }): Promise<{ data: { body?: string; html_url: string } }>;
    };
  };
};

/** The step the run's status comment shows in progress (its ⏳ line), and the comment's address. */
async function statusComment(
  api: GitHubApi,
  target: IssueTarget,
  data: FixJobData,
): Promise<{ step: string | null; url: string } | null> {
  if (!data.statusCommentId) return null;
  try {
    const { data: comment } = await (api as CommentReader).rest.issues.getComment({
      owner: target.owner,
      repo: target.repo,
      comment_id: data.statusCommentId,
    });
    const body = comment.body ?? "";
    if (!body.includes(STATUS_MARKER)) return { step: null, url: comment.html_url };
    const line = body.split("\n").find((l) => l.includes("⏳"));
    const step = line
      ? line
          .replace(/^- \[[ x]\]\s*/, "")
          .replace(/[*⏳]/g, "")
          .trim()
      : null;
    return { step: step || null, url: comment.html_url };
  } catch (error) {
    if (httpStatus(error) === 404) return null; // deleted by someone
    throw error;
  }
}

/**
 * HandlerDeps.runOf over the trajectory store: the newest run of the issue among the latest stored (a
 * running run saves after each step), with its signed page link when the app serves it (PUBLIC_URL).
 */
export function latestRunOf(
  store: Pick<TrajectoryStore, "list">,
  link: { publicUrl?: string | undefined; secret: string },
): NonNullable<HandlerDeps["runOf"]> {
  return async (repoId, issueNumber) => {
    const run = (await store.list(RECENT_RUNS)).find(
      (r) => r.repoId === repoId && r.issue === issueNumber && r.finishedAt === null,
    );
    if (!run) return null;
    const url = link.publicUrl ? trajectoryUrl(link.publicUrl, link.secret, `${run.name}.traj`) : undefined;
    return { costUsd: run.costUsd, ...(url ? { url } : {}) };
  };
}
