/**
 * The host checkout of an instance: the repository cloned at its base commit, with every ref and object
 * that is not the base commit's history removed, so the agent cannot read the fix from a later commit.
 */
import { resolve } from "node:path";
import { AgentFixError } from "../../src/shared/errors.js";
import { isGitUrl } from "../agent/cli-support.js";
import { git } from "../run/checkout/git.js";
import { operatorTree } from "../run/checkout/trusted-tree.js";
import { type PreparedTree, prepareTree } from "../run/prepare/prepare-tree.js";
import type { RunSandboxes } from "../run/prepare/run-sandboxes.js";
import { tokenForCloneUrl } from "./mine/token.js";

interface InstanceCheckout {
  dir: string;
  /** The base commit's full sha. */
  headSha: string;
}

export async function checkoutInstance(
  repo: string,
  baseCommit: string,
  dir: string,
  signal?: AbortSignal,
): Promise<InstanceCheckout> {
  const source = isGitUrl(repo) ? repo : resolve(repo);
  const options = signal ? { signal } : {};
  // A repository of the configured GitHub (as `agent-fix mine` writes them) is cloned with GITHUB_TOKEN.
  const token = isGitUrl(repo) ? tokenForCloneUrl(repo) : undefined;
  await git(["clone", "--quiet", "--no-local", "--no-checkout", source, dir], {
    ...options,
    ...(token ? { token } : {}),
  });
  try {
    await git(["-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", baseCommit], {
      ...options,
      cwd: dir,
    });
  } catch (error) {
    throw new AgentFixError(`base_commit ${baseCommit} is not a commit of ${repo}`, {
      code: "eval_base_commit_missing",
      fault: "config",
      cause: error,
    });
  }
  await git(["remote", "remove", "origin"], { cwd: dir });
  const refs = (await git(["for-each-ref", "--format=%(refname)"], { cwd: dir })).split("\n");
  for (const ref of refs.filter(Boolean)) await git(["update-ref", "-d", ref], { cwd: dir });
  await git(["reflog", "expire", "--expire=now", "--all"], { cwd: dir });
  await git(["gc", "--quiet", "--prune=now"], { ...options, cwd: dir });
  const headSha = (await git(["rev-parse", "HEAD"], { cwd: dir })).trim();
  return { dir, headSha };
}

/** Setup of an instance (the eval's and mine's alike): with network when it has commands, no secrets. */
const SETUP_TIMEOUT_MS = 30 * 60_000;

/** The instance's checkout with its setup's result: the tree every sandbox of the instance starts from. */
export function prepareInstanceTree(
  sandboxes: RunSandboxes,
  checkout: InstanceCheckout,
  root: string,
  setup: readonly string[],
  signal: AbortSignal,
): Promise<PreparedTree> {
  return prepareTree({
    sandboxes,
    // The instance's base commit, which the operator's instance file names.
    trusted: operatorTree(checkout.dir, checkout.headSha),
    root,
    setup: { commands: setup, network: setup.length > 0, timeoutMs: SETUP_TIMEOUT_MS },
    secrets: {},
    signal,
  });
}
