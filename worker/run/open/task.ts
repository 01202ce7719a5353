/**
 * What a run works on and how its change goes out: the issue as GitHub has it now, and for a fix run the
 * issue itself as the agent's task, the default branch to start from and a new draft pull request; a
 * review round (open/review-task.ts) brings the review, the pull request's branch and its own publisher.
 */

import type { RepositoryIdentity } from "../prepare/environment-key.js";
import { githubPublisher, type Publisher } from "../publish/github-publisher.js";
import { keepForRetry } from "../publish/pending-publishes.js";
import type { OpenRun } from "./open-run.js";

/** The issue and its repository, read through the installation's client for this attempt. */
export interface Issue {
  number: number;
  title: string;
  body: string | null;
  /** By id and installation (what binds setup secrets and kept environments), and as it is named now. */
  repository: RepositoryIdentity & { fullName: string; cloneUrl: string; defaultBranch: string };
  /** The operator's setup secrets bound to this repository (never the GitHub token). */
  setupSecrets: Record<string, string>;
}

export interface Task {
  issue: Issue;
  /** What the agent is asked: the issue, or the issue and the review. */
  ask: { number: number; title: string; body: string | null };
  /** A review round's pull request branch: cloned beside the default branch, pushed to without force. */
  existingBranch?: string | undefined;
  /**
   * A rebase round's conflicting merge: this base branch is merged into `existingBranch` on the host
   * (merge/start-merge.ts), the agent resolves the conflicts, and the tested tree goes out as the merge commit.
   */
  mergeFrom?: string | undefined;
  /**
   * With `mergeFrom`, a rebase's conflict (`worker.keepUp.strategy: rebase`, every commit on the branch the
   * app's): the branch's change is replayed on the base as one commit instead of a merge, and that goes out
   * as a force-push leased on the branch's commit the round started from.
   */
  linear?: boolean | undefined;
  /** The commit's first line. */
  commitTitle: string;
  /** The GitHub writes after the push; kept for the job's next attempt when opening the pull request fails. */
  publisher: Publisher;
  /** Whether the model is given the repository's pull request template to fill in (not for a review round). */
  pullRequestTemplate: boolean;
}

export function fixTask(run: OpenRun, issue: Issue): Task {
  return {
    issue,
    ask: { number: issue.number, title: issue.title, body: issue.body },
    commitTitle: issue.title,
    publisher: keptOnFailure(
      run,
      githubPublisher(run.octokit, run.job.data, {
        ...publisherLinks(run),
        // Its CODEOWNERS file, read with a token that may only read contents.
        contents: () => run.credentials.contentsReader(),
      }),
    ),
    pullRequestTemplate: true,
  };
}

/** The links a publisher may write: the run's trajectory, and the hosts the model's text may link to. */
export function publisherLinks(run: OpenRun) {
  return { ...run.parts.trajectoryLinks(run.name), links: run.parts.links };
}

/** `publisher`, keeping the pushed change for the job's next attempt when opening its pull request fails. */
export function keptOnFailure(run: OpenRun, publisher: Publisher): Publisher {
  const store = run.parts.pendingPublishes;
  return store ? keepForRetry(publisher, store, run.keptKey, run.name, run.log) : publisher;
}
