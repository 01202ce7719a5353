/**
 * Reading the issue (run-job.ts), before anything is cloned, set up or asked of a model: what the
 * event that queued this job claimed is still true on GitHub now. The webhook handler checked the
 * same against GitHub when the event came, but a job may wait in the queue, be retried, handed back
 * or re-queued long after, and a signed body can be replayed after its issue was closed and
 * unlabelled (src/server/handlers/deliveries.ts drops a body it has handled, for as long as it remembers
 * it). So each attempt asks GitHub, through the installation's client, never the job's payload:
 * the issue is open; for a label run, the label is still on it; for a review run, the pull request
 * is still open (for a CI round, still at the commit whose checks failed); and whoever asked (the labeller, commenter or reviewer, and the author of every
 * review gathered into the round) still has write access. When one is no longer true the run ends
 * here, with the reason on the status comment and nothing cloned, run or pushed.
 */
import type { ProbotOctokit } from "probot";
import { githubFailure, hasWriteAccess } from "../../../src/shared/github/index.js";
import type { FixJobData } from "../../../src/shared/queue/index.js";

/** What starts a run, as the webhook server is configured (AGENT_FIX_LABEL, AGENT_FIX_LABEL_BOTS). */
export interface StartRules {
  label: string;
  /** Bots whose label starts a run without write access (the operator named them). */
  labelBots: readonly string[];
}

/** The issue as the worker read it from GitHub for this attempt. */
interface IssueNow {
  state: string;
  labels: ReadonlyArray<string | { name?: string | undefined }>;
}

/** Why the run must not go on (a sentence for the status comment), or null when it still may. */
export async function noLongerWanted(
  api: ProbotOctokit,
  job: FixJobData,
  issue: IssueNow,
  rules: StartRules,
  /** The app's `SLUG[bot]`: a rebase round it started itself (its base moved) has no person to ask. */
  appLogin: string,
): Promise<string | null> {
  const nothing = "since this run was queued, so nothing was done";
  if (issue.state !== "open") {
    return `#${job.issueNumber} was closed ${nothing}. Reopen it to start agent-fix again.`;
  }
  if (job.trigger === "label" && !issue.labels.some((l) => labelName(l) === rules.label)) {
    return `The \`${rules.label}\` label was removed from #${job.issueNumber} ${nothing}. Add it again to start agent-fix.`;
  }
  const repo = { owner: job.owner, repo: job.repo };
  if (
    (job.trigger === "review" || job.trigger === "ci" || job.trigger === "rebase") &&
    job.pullNumber !== undefined
  ) {
    const { data: pull } = await api.rest.pulls
      .get({ ...repo, pull_number: job.pullNumber })
      .catch((error: unknown) => {
        throw githubFailure(error, `reading pull request #${job.pullNumber}`);
      });
    if (pull.state !== "open") {
      return `Pull request #${job.pullNumber} was closed ${nothing}. Reopen it and ${job.trigger === "review" ? "request changes" : "ask"} again.`;
    }
    // A CI round is about one commit: a newer one on the branch has CI of its own.
    if (job.ci && pull.head.sha !== job.ci.headSha) {
      return `Pull request #${job.pullNumber} has a newer commit than the one whose checks failed ${nothing}.`;
    }
  }
  for (const login of askers(job, rules, appLogin)) {
    const writer = await hasWriteAccess(api, repo, login).catch((error: unknown) => {
      throw githubFailure(error, `reading the permission of @${login}`);
    });
    if (!writer) {
      return `@${login} no longer has write access to this repository ${nothing}. Someone with write access can start a new run.`;
    }
  }
  return null;
}

/** Everyone whose request this run acts on and who must still be a writer. */
function askers(job: FixJobData, rules: StartRules, appLogin: string): string[] {
  // The job's own requester, then the authors of reviews gathered into a follow-up round.
  const logins = new Set([job.requestedBy, ...(job.feedback ?? []).map((f) => f.by)]);
  // A CI round is the app's own follow-up on its pull request, requested by the app itself.
  if (job.trigger === "ci") logins.delete(job.requestedBy);
  // So is a rebase round the app queued when the base moved and the pull request conflicted.
  if (job.trigger === "rebase" && job.requestedBy === appLogin) logins.delete(job.requestedBy);
  // A bot the operator named starts label runs without being a collaborator (src/server/handlers/issues-labeled.ts).
  if (job.trigger === "label" && rules.labelBots.includes(job.requestedBy)) logins.delete(job.requestedBy);
  return [...logins];
}

function labelName(label: string | { name?: string | undefined }): string | undefined {
  return typeof label === "string" ? label : label.name;
}
