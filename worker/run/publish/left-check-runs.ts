/**
 * The app's check run is never left in progress. GitHub keeps a check run in progress until its app
 * completes it, and a required-check rule waits on it forever. The run's check run step marks the commit
 * it is about to create one on in Redis, under the job's id, before it asks GitHub (so a worker killed
 * while the request is on its way still left a mark), and clears it once the publish step completed it.
 * Whatever ends the job otherwise ends the check run too, by the mark:
 *   - the run cancelled after the push, or failed for good (end/run-failure.ts): cancelled or failure
 *   - the worker died, lost its lock or handed the job back: the job's next attempt, as it opens (its own
 *     check run follows on the commit it pushes), or, when no attempt follows, whichever worker finalizes
 *     the abandoned job (end/abandoned-status.ts); a job cancelled while it waited for that next attempt,
 *     whichever worker hears it was removed
 * Ending it lists the app's check runs of that name still in progress on the marked commit
 * (`GET .../commits/{sha}/check-runs`) and completes each, with a summary saying why and what to do.
 * Ids only in Redis, never a token; the token may only write checks.
 */
import type { QueueNames } from "../../../src/shared/queue/index.js";
import { openCheckRunKey } from "../../../src/shared/queue/keys.js";
import { githubMessage } from "../../github/pull-request.js";
import type { Logger } from "../../log.js";
import type { InstallationAuth } from "../open/installation-auth.js";

/** The app's own check run's name (check-run.ts creates it; here, where nothing of the run is imported). */
export const CHECK_RUN_NAME = "agent-fix / tests";

/** Where a check run of the job's may be in progress: the repository (ids for a fresh token) and commit. */
export interface CheckRunPlace {
  installationId: number;
  repoId: number;
  owner: string;
  repo: string;
  headSha: string;
}

/** How a check run left in progress is completed, and the words its summary gives. */
export interface CheckRunEnding {
  conclusion: "cancelled" | "failure";
  title: string;
  summary: string;
}

/** The Redis commands the marks need. */
interface MarkRedis {
  set(key: string, value: string, mode: "EX", seconds: number): Promise<unknown>;
  del(key: string): Promise<unknown>;
  getdel(key: string): Promise<string | null>;
}

/** The marks of the check runs jobs may have left in progress, by job id. */
export interface LeftCheckRuns {
  /** Before the check run is created on `place`. */
  mark(jobId: string, place: CheckRunPlace): Promise<void>;
  /** Once it is completed. */
  clear(jobId: string): Promise<void>;
  /** The mark, taken once (several processes may hear of the same job's end). */
  take(jobId: string): Promise<CheckRunPlace | null>;
}

/** Longer than a job lives, retries and backoffs included; a mark older than that names nothing to end. */
const MARK_TTL_S = 7 * 24 * 60 * 60;

export function leftCheckRuns(redis: MarkRedis, names: QueueNames): LeftCheckRuns {
  const key = (jobId: string) => openCheckRunKey(names, jobId);
  return {
    mark: async (jobId, place) => {
      await redis.set(key(jobId), JSON.stringify(place), "EX", MARK_TTL_S);
    },
    clear: async (jobId) => {
      await redis.del(key(jobId));
    },
    async take(jobId) {
      const raw = await redis.getdel(key(jobId));
      if (!raw) return null;
      try {
        return placeOf(JSON.parse(raw));
      } catch {
        return null; // a mark that does not parse names no check run
      }
    },
  };
}

function placeOf(value: unknown): CheckRunPlace | null {
  const place = value as Partial<CheckRunPlace> | null;
  const ids = [place?.installationId, place?.repoId];
  const names = [place?.owner, place?.repo, place?.headSha];
  if (!ids.every((id) => typeof id === "number") || !names.every((n) => typeof n === "string")) return null;
  return place as CheckRunPlace;
}

/** The part of Octokit ending a check run needs (checks/listForRef and checks/update). */
export interface CheckRunsApi {
  rest: {
    checks: {
      listForRef(params: {
        owner: string;
        repo: string;
        ref: string;
        check_name: string;
        status: "in_progress";
        filter: "all";
        per_page: number;
      }): Promise<{ data: { check_runs: { id: number; app: { slug?: string } | null }[] } }>;
      update(params: {
        owner: string;
        repo: string;
        check_run_id: number;
        status: "completed";
        conclusion: CheckRunEnding["conclusion"];
        output: { title: string; summary: string };
      }): Promise<unknown>;
    };
  };
}

/**
 * Completes the app's (`appSlug`) check runs named `name` still in progress on the place's commit;
 * resolves to how many it completed.
 */
export async function endCheckRunsAt(
  api: CheckRunsApi,
  place: CheckRunPlace,
  name: string,
  appSlug: string,
  ending: CheckRunEnding,
): Promise<number> {
  const repo = { owner: place.owner, repo: place.repo };
  const { data } = await api.rest.checks.listForRef({
    ...repo,
    ref: place.headSha,
    check_name: name,
    status: "in_progress",
    filter: "all",
    per_page: 100,
  });
  const ours = data.check_runs.filter((run) => run.app?.slug === appSlug);
  for (const run of ours) {
    await api.rest.checks.update({
      ...repo,
      check_run_id: run.id,
      status: "completed",
      conclusion: ending.conclusion,
      output: { title: ending.title, summary: ending.summary },
    });
  }
  return ours.length;
}

/**
 * Ends the check run job `jobId` left in progress, if its mark says it may have: with `api` when the run
 * holds a client that may write checks, else a fresh one minted on the host for the marked repository
 * (revoked once done). Never rejects: a check run that cannot be ended is logged.
 */
export async function endLeftCheckRun(
  parts: { leftCheckRuns?: LeftCheckRuns | undefined; auth: InstallationAuth; identity: { name: string } },
  jobId: string,
  ending: CheckRunEnding,
  log: Logger,
  api?: () => Promise<CheckRunsApi>,
): Promise<void> {
  const place = await parts.leftCheckRuns?.take(jobId).catch((err: unknown) => {
    log.warn({ err }, "could not read whether a check run was left in progress");
    return null;
  });
  if (!place) return;
  const credentials = api ? undefined : parts.auth.forRun(place.installationId, place.repoId);
  try {
    const writer = api ? await api() : ((await credentials?.checksWriter()) as unknown as CheckRunsApi);
    const slug = parts.identity.name.replace(/\[bot\]$/, "");
    const ended = await endCheckRunsAt(writer, place, CHECK_RUN_NAME, slug, ending);
    if (ended > 0)
      log.info({ sha: place.headSha, conclusion: ending.conclusion }, "check run left in progress ended");
  } catch (error) {
    log.warn(
      `the check run left in progress on ${place.headSha} could not be ended: ${githubMessage(error)}`,
    );
  } finally {
    await credentials?.revoke();
  }
}

const again = (label: string) =>
  `To run again, add the \`${label}\` label to the issue again or comment \`/agent-fix\` on it (on the pull request, \`/agent-fix\` with what to change starts a round there).`;

/** The check run's end when the run is cancelled after the push. */
export function cancelledEnding(by: string, label: string): CheckRunEnding {
  return {
    conclusion: "cancelled",
    title: "The run was cancelled",
    summary: `The run was cancelled by ${by.replace(/^@/, "")} after it pushed this commit, so the tested change was not published from it and this check did not finish. ${again(label)}`,
  };
}

/** The check run's end when the run fails for good after the push (no retry follows). */
export function failedEnding(reason: string, label: string): CheckRunEnding {
  return {
    conclusion: "failure",
    title: "The run failed after pushing this commit",
    summary: `${reason}\n\nThe run failed for good after it pushed this commit: the issue's status comment says more. ${again(label)}`,
  };
}

/** The check run's end when its worker stopped and the job's next attempt takes over. */
export const SUPERSEDED_ENDING: CheckRunEnding = {
  conclusion: "cancelled",
  title: "The worker stopped; another attempt took over",
  summary:
    "The worker running this stopped before it finished (killed, out of memory, its host gone down, or its hold on the job lost), so the job was given out again. That attempt reports in a check run of its own on the commit it pushes; the issue's status comment follows it. Nothing to do unless that one fails too.",
};

/** The check run's end when the job ended with nobody left to run it (`reason`: why, in a maintainer's words). */
export function abandonedEnding(reason: string): CheckRunEnding {
  return { conclusion: "failure", title: "The run stopped before it finished", summary: reason };
}

/** The check run's end when the job was cancelled while it waited for its next attempt. */
export function removedEnding(label: string): CheckRunEnding {
  return {
    conclusion: "cancelled",
    title: "The run was cancelled",
    summary: `The run was cancelled (or removed from the queue) while it waited for another attempt after its worker stopped, so this check will not finish. ${again(label)}`,
  };
}
