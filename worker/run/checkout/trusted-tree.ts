/**
 * The tree setup runs on (the run's prepare step). Setup holds the setup secrets and network,
 * and the environment it prepares is kept for later runs of the repository, so it runs only on content
 * the repository's maintainers or the operator put there: the default branch's head, or a commit the
 * operator named (an eval instance, a local repository). Never on a pull request's branch, which the
 * agent wrote: a review run lays that branch's tracked files over the environment prepared from the
 * default branch (worker/run/prepare/prepare-tree.ts). prepareTree takes only a TrustedTree made here, and
 * checks at run time that it was (a frozen object this module registered), so no caller can hand it
 * a checkout of another ref by mistake.
 */
import { AgentFixError } from "../../../src/shared/errors.js";

export interface TrustedTree {
  /** Host directory of the checkout (its `.git` is the worker's own). */
  readonly dir: string;
  readonly headSha: string;
  /** What it is, for an error: "the default branch main", "the operator's commit". */
  readonly source: string;
}

const made = new WeakSet<TrustedTree>();

function register(tree: TrustedTree): TrustedTree {
  const frozen = Object.freeze({ ...tree });
  made.add(frozen);
  return frozen;
}

/** A clone of the repository's default branch, checked to be one. */
export function defaultBranchTree(
  checkout: { dir: string; branch: string; headSha: string },
  defaultBranch: string,
): TrustedTree {
  if (checkout.branch !== defaultBranch) throw untrusted(`the branch ${checkout.branch}`);
  return register({
    dir: checkout.dir,
    headSha: checkout.headSha,
    source: `the default branch ${defaultBranch}`,
  });
}

/** A commit the operator chose itself (an eval or mine instance's base, a repository on the operator's disk). */
export function operatorTree(dir: string, headSha: string): TrustedTree {
  return register({ dir, headSha, source: "a commit the operator chose" });
}

/** Refuses a tree this module did not make. */
export function assertTrusted(tree: TrustedTree): void {
  if (!made.has(tree)) throw untrusted(tree.dir);
}

function untrusted(what: string): AgentFixError {
  return new AgentFixError(`Setup was asked to run on ${what}, which is not the default branch's head`, {
    code: "setup_tree_untrusted",
    fault: "internal",
    hint:
      "Nothing ran. Setup holds the setup secrets and network and its environment is kept, so it runs on the " +
      "default branch only; report this as a bug of agent-fix.",
  });
}
