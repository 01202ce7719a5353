/**
 * The fix run's sibling for a job's later attempt on a change an earlier one kept (pending-publishes.ts):
 * push it when it was not pushed (a fresh clone, the same commit made again from the tested patch on the
 * tested-on commit, the tree checked against the tested one), then the app's check run on it, then
 * publish. No setup, no agent, no model.
 */

import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { CancelReason } from "../../src/shared/errors.js";
import type { LinkPolicy } from "../../src/shared/github/inert-links.js";
import type { Logger } from "../log.js";
import type { RunOutcome } from "../run-end.js";
import { cloneRepository } from "./checkout/clone.js";
import { ciPublisher } from "./open/ci-task.js";
import type { OpenRun } from "./open/open-run.js";
import { reviewPublisher } from "./open/review-task.js";
import { progressIsBestEffort, type StatusReporter } from "./open/status-comment.js";
import { type Issue, keptOnFailure, publisherLinks } from "./open/task.js";
import { makeCheckoutRoot } from "./open/work-dirs.js";
import { type CheckRun, startCheckRunOnBranch } from "./publish/check-run.js";
import { githubPublisher, type Publisher } from "./publish/github-publisher.js";
import type { KeptChange, PendingPublishStore } from "./publish/pending-publishes.js";
import { cancelOf, publishPullRequest } from "./publish/publish-pull-request.js";
import type { CommitIdentity } from "./push/commit.js";
import { checkoutBase, commitAndPush, type UnpushedChange } from "./push/commit-and-push.js";

interface ResumeInput {
  kept: KeptChange;
  publisher: Publisher;
  status: StatusReporter;
  requestedBy: string;
  /** What pushing again needs; only used when the change was not pushed. */
  push: {
    cloneUrl: string;
    identity: CommitIdentity;
    links?: LinkPolicy | undefined;
    token: (purpose: "clone" | "push") => Promise<string>;
    signal: AbortSignal;
    workRoot?: string | undefined;
  };
  /** The app's check run on the pushed commit, started once the change is pushed. */
  checkRun?: () => Promise<CheckRun>;
  /** A cancel of the run that came by now: honoured until the pull request opens. */
  cancelled?: () => Promise<CancelReason | null>;
  /** Where the change is kept, under `key`: updated once it is pushed, dropped once it is published. */
  store?: PendingPublishStore | undefined;
  key: string;
  logger?: Logger | undefined;
}

/** The kept change of `run`, published through the run's own client and status. */
export function resumeKept(run: OpenRun, kept: KeptChange, issue: Issue): Promise<RunOutcome> {
  run.log.info(`${kept.unpushed ? "pushing and " : ""}publishing the change kept before`);
  return resumePublishing({
    kept,
    publisher: keptOnFailure(
      run,
      run.job.data.trigger === "review"
        ? reviewPublisher(run.octokit, run.job.data, publisherLinks(run))
        : run.job.data.trigger === "ci"
          ? // The checks' names were the first attempt's: the reply says "the failing checks".
            ciPublisher(
              run.octokit,
              run.job.data,
              { toFix: [], alsoOnBase: [], baseBranch: "" },
              publisherLinks(run),
            )
          : githubPublisher(run.octokit, run.job.data, {
              ...publisherLinks(run),
              contents: () => run.credentials.contentsReader(),
            }),
    ),
    status: run.status,
    requestedBy: run.job.data.requestedBy,
    push: {
      cloneUrl: issue.repository.cloneUrl,
      identity: run.parts.identity,
      links: run.parts.links,
      token: (purpose) => run.credentials.token(purpose),
      signal: run.signal,
      workRoot: run.parts.workRoot,
    },
    checkRun: () => startCheckRunOnBranch(run, issue, kept.draft),
    cancelled: () => cancelOf(run),
    store: run.parts.pendingPublishes,
    key: run.keptKey,
    logger: run.log,
  });
}

export async function resumePublishing(input: ResumeInput): Promise<RunOutcome> {
  const started = Date.now();
  const { kept } = input;
  void input.status.progress("publishing").catch(progressIsBestEffort);
  if (kept.unpushed) {
    await pushAgain(input, kept.unpushed);
    // Pushed: should this attempt stop before the pull request opens, the next one only publishes.
    await input.store?.save(input.key, { run: kept.run, draft: kept.draft }).catch((err: unknown) => {
      // Kept as unpushed instead: a later attempt finds its commit on the branch or pushes it again.
      input.logger?.warn({ err }, "the pushed change could not be marked pushed");
    });
  }
  const pushed = Date.now();
  const { publisher, status, requestedBy, logger } = input;
  const check = await input.checkRun?.();
  const pr = await publishPullRequest({
    ...{ publisher, status, requestedBy, draft: kept.draft, check, logger },
    cancelled: input.cancelled,
  });
  await input.store?.drop(input.key).catch((err: unknown) => {
    logger?.warn({ err }, "the published change was not dropped from the store");
  });
  return {
    kind: "pull_request",
    number: pr.number,
    url: pr.url,
    trajectory: kept.draft.trajectory,
    timings: { clone: pushed - started, publish: Date.now() - pushed },
  };
}

async function pushAgain(input: ResumeInput, change: UnpushedChange): Promise<void> {
  const { cloneUrl, identity, token, signal, workRoot } = input.push;
  // Marked with this worker's id: the reaper removes it should the worker die while pushing.
  const root = await makeCheckoutRoot(workRoot);
  try {
    const checkout = await cloneRepository({
      cloneUrl,
      token: await token("clone"),
      dir: join(root, "repo"),
      branch: change.baseBranch,
      signal,
    });
    const base = await checkoutBase(checkout.dir, change, checkout.headSha, () => token("clone"), signal);
    if (base === "pushed") return;
    await commitAndPush({
      dir: checkout.dir,
      change,
      identity,
      links: input.push.links,
      issueNumber: input.kept.draft.issueNumber,
      pushToken: () => token("push"),
      signal,
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
