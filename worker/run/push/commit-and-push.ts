/**
 * The tested change as a commit on the host checkout, pushed to the issue's branch. A push that fails
 * in a way a later attempt may get through (a 5xx or network error of the git server, or this worker
 * shutting down mid-push) keeps what is needed to make the same commit again, so the job's next
 * attempt only pushes and publishes: the agent is not run again and the model is not paid for twice.
 */

import { AgentFixError, type CancelReason, isRetryable } from "../../../src/shared/errors.js";
import type { LinkPolicy } from "../../../src/shared/github/inert-links.js";
import type { Logger } from "../../log.js";
import { git } from "../checkout/git.js";
import { type CommitIdentity, commitPatch, pushFixBranch } from "./commit.js";

/** Everything that makes the tested commit again on a fresh clone; no credential. */
export interface UnpushedChange {
  /** The branch the run started from (the default branch, or a review run's fix branch). */
  baseBranch: string;
  /** The commit the change was tested on: the new commit's parent. */
  baseSha: string;
  /** The submitted patch, as the gate tested it. */
  patch: string;
  /** The tree the gate tested: the commit must have exactly this tree. */
  tree: string;
  commitTitle: string;
  forbiddenPaths: string[];
  /** false for review runs: a new commit on top of the branch, never a force-push. */
  force: boolean;
  /**
   * A rebase round's resolved merge: `baseSha` is the merge commit holding the conflict markers, and the
   * change is folded into it (same parents, the tested tree), so one merge commit goes out.
   */
  mergeCommit?: boolean | undefined;
  /**
   * A rebase round's linear replay: the branch's commit the new one replaces. The push is forced, with a
   * lease on that commit: refused if anyone pushed meanwhile, never overwriting their commit.
   */
  lease?: string | undefined;
}

/** Commits `change` on the checkout at `dir` (already at `change.baseSha`) and pushes it. Returns the branch and the commit pushed. */
export async function commitAndPush(input: {
  dir: string;
  change: UnpushedChange;
  identity: CommitIdentity;
  links?: LinkPolicy | undefined;
  issueNumber: number;
  pushToken: () => Promise<string>;
  signal: AbortSignal;
  /** Keeps the change for the job's next attempt when the push failed in a way it may get through. */
  keep?: ((change: UnpushedChange) => Promise<void>) | undefined;
  /** The job's logger: a change that could not be kept is logged there, with the job's ids. */
  logger?: Logger | undefined;
  /**
   * The change's commit made ahead, beside its gate (commitAhead): pushed as it is. Not for a merge or a
   * lease, which commit on the checkout's HEAD; one that failed is made here again, which says why.
   */
  ahead?: Promise<string> | undefined;
}): Promise<{ branch: string; sha: string }> {
  const { dir, change } = input;
  // Minted while the commit is made on the host (a GitHub round trip less on the run's path); it never
  // leaves the host, and a change refused below leaves it unused, revoked with the run's other tokens.
  const token = input.pushToken();
  token.catch(() => {}); // awaited before the push; a commit that fails first is the error to report
  const plain = !change.mergeCommit && !change.lease;
  const ahead = plain ? await input.ahead?.catch(() => null) : null;
  const sha = ahead ?? (await commitOnCheckout(input));
  try {
    const branch = await pushFixBranch({
      dir,
      issueNumber: input.issueNumber,
      token: await token,
      signal: input.signal,
      force: change.force,
      ...(change.lease ? { lease: change.lease } : {}),
      commit: sha,
    });
    return { branch, sha };
  } catch (error) {
    if (input.keep && worthAnotherPush(error, input.signal)) {
      await input.keep(change).catch((keepError: unknown) => {
        input.logger?.error({ err: keepError }, "the unpushed change could not be kept");
      });
    }
    throw error;
  }
}

/** The change committed on the checkout's HEAD (folded into the merge it resolves), its tree checked. */
async function commitOnCheckout(input: Parameters<typeof commitAndPush>[0]): Promise<string> {
  const { dir, change } = input;
  await commitPatch({
    dir,
    patch: change.patch,
    identity: input.identity,
    ...(input.links ? { links: input.links } : {}),
    issueNumber: input.issueNumber,
    issueTitle: change.commitTitle,
    forbiddenPaths: change.forbiddenPaths,
  });
  if (change.mergeCommit) await foldIntoMerge(dir, change.commitTitle, input.identity);
  return assertCommittedTree(dir, change.tree);
}

/** A push error a later attempt may get past: the server's or the network's, or this worker stopping. */
function worthAnotherPush(error: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return (signal.reason as CancelReason).kind !== "cancelled";
  return isRetryable(error);
}

/**
 * Brings a fresh clone of the kept change's base branch (at `headSha`) to the commit the change was
 * tested on: fetched by its id when the branch has moved on (GitHub serves any reachable commit).
 * "pushed" when the branch already holds the tested change on that commit: a push cut off by a
 * shutdown can still land (git's HTTP helper outlives git), and pushing it again would find the branch moved.
 */
export async function checkoutBase(
  dir: string,
  change: UnpushedChange,
  headSha: string,
  cloneToken: () => Promise<string>,
  signal: AbortSignal,
): Promise<"at_base" | "pushed"> {
  if (headSha === change.baseSha) return "at_base";
  if (await holdsTheChange(dir, change)) return "pushed";
  try {
    await git(["fetch", "--quiet", "--depth", "1", "origin", change.baseSha], {
      cwd: dir,
      token: await cloneToken(),
      signal,
    });
    await git(["reset", "--quiet", "--hard", change.baseSha], { cwd: dir });
    return "at_base";
  } catch (error) {
    if (isRetryable(error) || signal.aborted) throw error;
    throw new AgentFixError(
      `The commit the change was tested on (${change.baseSha}) is gone from ${change.baseBranch}, so the tested change was not pushed`,
      {
        code: "tested_base_gone",
        fault: "user",
        hint: "The branch was rewritten while the change waited to be pushed. Start a new run.",
        cause: error,
      },
    );
  }
}

/** Whether HEAD is a commit of the tested tree on the tested-on commit (read raw: the clone is shallow). */
async function holdsTheChange(dir: string, change: UnpushedChange): Promise<boolean> {
  const commit = await git(["cat-file", "commit", "HEAD"], { cwd: dir });
  const header = commit.slice(0, commit.indexOf("\n\n"));
  const parents = [...header.matchAll(/^parent (\S+)$/gm)].map((m) => m[1]);
  return header.startsWith(`tree ${change.tree}\n`) && parents.length === 1 && parents[0] === change.baseSha;
}

/** The change's commit folded into its parent, the merge commit: the tested tree with the merge's parents. */
async function foldIntoMerge(dir: string, title: string, identity: CommitIdentity): Promise<void> {
  const { name, email } = identity;
  await git(["reset", "--quiet", "--soft", "HEAD~1"], { cwd: dir });
  await git(
    [
      "-c",
      `user.name=${name}`,
      "-c",
      `user.email=${email}`,
      "commit",
      "--quiet",
      "--no-verify",
      "--amend",
      "--reset-author",
      "-F",
      "-",
    ],
    {
      cwd: dir,
      input: `${title}\n\nThe conflicts were resolved by agent-fix; the repository's tests pass on it.\n`,
    },
  );
}

/** The commit about to be pushed holds exactly the tree the gate tested, or nothing is pushed. Returns the commit. */
async function assertCommittedTree(dir: string, testedTree: string): Promise<string> {
  // One git for both: the commit (what is pushed) and its tree.
  const [sha = "", committed] = (await git(["rev-parse", "HEAD", "HEAD^{tree}"], { cwd: dir }))
    .trim()
    .split("\n");
  if (committed === testedTree) return sha;
  throw new AgentFixError(
    `The commit's tree ${committed} is not the tree the tests ran on (${testedTree}), so nothing was pushed`,
    { code: "published_tree_mismatch", fault: "internal" },
  );
}
