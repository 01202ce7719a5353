/**
 * A job's later attempt for a change kept by an earlier one (see pending-publish.ts): push it when it
 * was not pushed (a fresh clone, the same commit made again from the tested patch on the tested-on
 * commit, the tree checked against the tested one), then publish. No setup, no agent, no model.
 */

import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { LinkPolicy } from "../../src/github/inert-links.js";
import type { Logger } from "../log.js";
import { cloneRepository } from "./checkout.js";
import { makeCheckoutRoot } from "./checkout-dirs.js";
import type { CommitIdentity } from "./commit.js";
import type { KeptChange, PendingPublishStore } from "./pending-publish.js";
import { publishPullRequest } from "./publish-step.js";
import { checkoutBase, commitAndPush, type UnpushedChange } from "./push-step.js";
import { type Publisher, progressIsBestEffort, type RunOutcome, type StatusReporter } from "./types.js";

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
  /** Where the change is kept, under `key`: updated once it is pushed, dropped once it is published. */
  store?: PendingPublishStore | undefined;
  key: string;
  logger?: Logger | undefined;
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
  const pr = await publishPullRequest({ publisher, status, requestedBy, draft: kept.draft, logger });
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
