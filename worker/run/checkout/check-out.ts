/**
 * The clone on the host and the repository's config, at the same time (the config comes through the
 * contents API, never the clone). A review round clones the default branch beside its pull request's
 * branch: setup runs on the default branch's files only (trusted-tree.ts), never on what the agent wrote.
 */
import { join } from "node:path";
import { type LoadedRepoConfig, loadRepoConfig } from "../configure/repo-config.js";
import type { OpenRun } from "../open/open-run.js";
import { progressIsBestEffort } from "../open/status-comment.js";
import type { Task } from "../open/task.js";
import { type Checkout, cloneRepository } from "./clone.js";
import { defaultBranchTree, type TrustedTree } from "./trusted-tree.js";

export interface CheckedOut {
  /** The branch the run starts from and pushes to. */
  checkout: Checkout;
  /** The default branch's checkout: what setup runs on and the kept environment is keyed by. */
  trusted: TrustedTree;
  config: LoadedRepoConfig;
}

export async function checkOut(run: OpenRun, task: Task, workDir: string): Promise<CheckedOut> {
  const { defaultBranch, cloneUrl } = task.issue.repository;
  void run.status.progress("cloning").catch(progressIsBestEffort);
  const configLoaded = loadConfig(run, task);
  configLoaded.catch(() => {}); // awaited below; a clone that fails first is the error reported
  const clone = async (branch: string, dir: string) =>
    cloneRepository({
      cloneUrl,
      token: await run.credentials.token("clone"),
      dir: join(workDir, dir),
      branch,
      signal: run.signal,
    });
  const branch = task.existingBranch ?? defaultBranch;
  const [checkout, defaultCheckout] = await Promise.all([
    clone(branch, "repo"),
    branch === defaultBranch ? null : clone(defaultBranch, "default-branch"),
  ]);
  const trusted = defaultBranchTree(defaultCheckout ?? checkout, defaultBranch);
  const config = await configLoaded;
  if (config.configNote) run.status.configured(config.configNote);
  return { checkout, trusted, config };
}

/**
 * The repository's .github/agent-fix.yml (and its owner's) as it is on the default branch, read with a
 * token that may only read contents, under the operator's rules; throws ConfigError naming the field.
 */
async function loadConfig(run: OpenRun, task: Task): Promise<LoadedRepoConfig> {
  const { owner, repo } = run.job.data;
  // Both readers' tokens minted at once: two GitHub round trips in series otherwise, before any read.
  const [repoReader, orgReader] = await Promise.all([
    run.credentials.contentsReader(),
    run.credentials.orgContentsReader(),
  ]);
  const config = await loadRepoConfig(
    { repo: repoReader, org: orgReader },
    { owner, repo, defaultBranch: task.issue.repository.defaultBranch },
    run.parts.configRules,
  );
  // A review round answers a review on a pull request already open: no template to fill in.
  return task.pullRequestTemplate
    ? config
    : { ...config, agent: { ...config.agent, pullRequestTemplate: undefined } };
}
