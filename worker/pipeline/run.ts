import { rm } from "node:fs/promises";
import { join } from "node:path";
import { AgentFixError } from "../../src/errors.js";
import { fixBranch } from "../../src/fix-branch.js";
import { cloneRepository } from "./checkout.js";
import { makeCheckoutRoot } from "./checkout-dirs.js";
import { publishPullRequest } from "./publish-step.js";
import { commitAndPush } from "./push-step.js";
import { type Checkout, type Gated, type RunState, stepClock } from "./run-state.js";
import { testInSandboxes } from "./sandbox-phase.js";
import { secretsIn } from "./secret-scan.js";
import { defaultBranchTree, type TrustedTree } from "./trusted-tree.js";
import type { PipelineRepoConfig, PullRequestDraft, RunInput, RunOutcome } from "./types.js";
import { progressIsBestEffort } from "./types.js";

/**
 * Steps 3 to 12 of docs/architecture.md for one fix job, in order. Errors propagate (the processor maps
 * them to retry or not and finalises the status comment); an outcome without a pull request is reported
 * here.
 */
export async function runFix<C extends PipelineRepoConfig>(input: RunInput<C>): Promise<RunOutcome> {
  // Marked with this worker's id: the reaper removes it should the worker die mid-run.
  const run: RunState<C> = { input, root: await makeCheckoutRoot(input.workRoot), ...stepClock() };
  try {
    const { checkout, trusted, config } = await cloneAndConfigure(run);
    const tested = await testInSandboxes(run, checkout, trusted, config);
    if (tested.kind === "no_pull_request") return tested;
    return await pushAndPublish(run, checkout, config, tested);
  } finally {
    await run.disposal;
    await rm(run.root, { recursive: true, force: true });
  }
}

/**
 * Steps 3 and 4: the clone on the host, and the repository's config. A review run clones the default
 * branch beside its pull request's branch: setup runs on the default branch's files only
 * (worker/pipeline/trusted-tree.ts), never on the branch the agent wrote.
 */
async function cloneAndConfigure<C extends PipelineRepoConfig>(
  run: RunState<C>,
): Promise<{ checkout: Checkout; trusted: TrustedTree; config: C }> {
  const { input } = run;
  const { defaultBranch } = input.repository;
  void input.status.progress("cloning").catch(progressIsBestEffort);
  // The config comes through the contents API, not the clone: both go at once.
  const configLoaded = input.loadConfig();
  configLoaded.catch(() => {}); // awaited below; a clone that fails first is the error reported
  const clone = async (branch: string, dir: string) =>
    cloneRepository({
      cloneUrl: input.repository.cloneUrl,
      token: await input.token("clone"),
      dir: join(run.root, dir),
      branch,
      signal: input.signal,
    });
  const branch = input.existingBranch ?? defaultBranch;
  const [checkout, defaultCheckout] = await Promise.all([
    clone(branch, "repo"),
    branch === defaultBranch ? null : clone(defaultBranch, "default-branch"),
  ]);
  const trusted = defaultBranchTree(defaultCheckout ?? checkout, defaultBranch);
  const config = await configLoaded;
  if (config.configNote) input.status.configured(config.configNote);
  run.lap("clone");
  return { checkout, trusted, config };
}

/** Steps 10 to 12: the tested change committed and pushed on the host, then the draft pull request. */
async function pushAndPublish<C extends PipelineRepoConfig>(
  run: RunState<C>,
  checkout: Checkout,
  config: C,
  { trajectory, baseline, proof, tested }: Gated,
): Promise<RunOutcome> {
  const { input, timings } = run;
  const { status } = input;
  void status.progress("publishing").catch(progressIsBestEffort);
  refuseSecretsInChange(tested.patch, input.setupSecrets);
  const keepUnpushed = input.keepUnpushed;
  const draft: PullRequestDraft = {
    issueNumber: input.issue.number,
    testCommand: config.testCommand,
    branch: fixBranch(input.issue.number),
    base: input.repository.defaultBranch,
    title: input.issue.title,
    trajectory,
    baseline,
    proof,
  };
  await commitAndPush({
    dir: checkout.dir,
    change: {
      baseBranch: checkout.branch,
      baseSha: checkout.headSha,
      patch: tested.patch,
      tree: tested.tree,
      commitTitle: input.commitTitle ?? input.issue.title,
      forbiddenPaths: config.forbiddenPaths,
      force: !input.existingBranch,
    },
    identity: input.identity,
    links: input.links,
    issueNumber: input.issue.number,
    pushToken: () => input.token("push"),
    signal: input.signal,
    keep: keepUnpushed ? (change) => keepUnpushed(draft, change) : undefined,
    logger: input.logger,
  });
  const pr = await publishPullRequest({
    publisher: input.publisher,
    status,
    draft,
    requestedBy: input.requestedBy,
    // Set by testInSandboxes once its sandboxes are removed.
    ...(run.disposal ? { alongside: run.disposal } : {}),
    logger: input.logger,
  });
  run.lap("publish");
  return { kind: "pull_request", number: pr.number, url: pr.url, trajectory, timings };
}

/** Setup's secrets never leave in a change, however the agent came by them. */
function refuseSecretsInChange(patch: string, secrets: Record<string, string>): void {
  const names = secretsIn(patch, secrets);
  if (names.length === 0) return;
  throw new AgentFixError(`The change holds the value of the setup secret(s) ${names.join(", ")}`, {
    code: "secret_in_change",
    fault: "model",
    hint: "Nothing was pushed.",
  });
}
