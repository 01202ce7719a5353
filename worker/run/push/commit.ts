import { AgentFixError } from "../../../src/shared/errors.js";
import { fixBranch } from "../../../src/shared/fix-branch.js";
import { GITHUB_COM_LINKS, type LinkPolicy } from "../../../src/shared/github/inert-links.js";
import { neutralisePlainText } from "../../../src/shared/github/neutralise.js";
import { git } from "../checkout/git.js";
import { pushRefusal, retryWhileTokenIsNew } from "../checkout/git-refusals.js";
import { type ChangedEntry, forbiddenEntries } from "./forbidden-paths.js";
import { changesBetween, stagedChanges } from "./staged-changes.js";

export interface CommitIdentity {
  name: string;
  email: string;
}

interface CommitPatchOptions {
  /** The host checkout (never the sandbox's copy). */
  dir: string;
  /** The agent's submission, a `git diff` of the workspace. */
  patch: string;
  identity: CommitIdentity;
  issueNumber: number;
  issueTitle: string;
  /** Globs from the repository config; a change under any of them stops the run before a push. */
  forbiddenPaths: readonly string[];
  /** Hosts a URL of the title may stay a link to (GitHub autolinks URLs in commit messages). */
  links?: LinkPolicy;
}

/**
 * The run's push step: applies the submitted patch on the host checkout and commits it as
 * the app, after the path check.
 */
export async function commitPatch(
  options: CommitPatchOptions,
): Promise<{ sha: string; changedPaths: string[] }> {
  if (options.patch.trim() === "") {
    throw new AgentFixError("The agent submitted no change", { code: "empty_patch", fault: "model" });
  }
  await git(["apply", "--index", "--binary", "--whitespace=nowarn", "-"], {
    cwd: options.dir,
    input: endedByNewline(options.patch),
  }).catch((error: unknown) => {
    throw new AgentFixError(`The submitted patch does not apply to the default branch: ${String(error)}`, {
      code: "patch_does_not_apply",
      fault: "model",
      cause: error,
    });
  });
  const changes = await refuseForbidden(options.dir, options.forbiddenPaths);
  const changed = changes.map((change) => change.path);
  const { name, email } = options.identity;
  const message = commitMessage(options);
  await git(
    [
      ...asIdentity(options.identity),
      "commit",
      "--quiet",
      "--no-verify",
      `--author=${name} <${email}>`,
      "-F",
      "-",
    ],
    { cwd: options.dir, input: message },
  );
  const sha = (await git(["rev-parse", "HEAD"], { cwd: options.dir })).trim();
  return { sha, changedPaths: changed };
}

/**
 * The title is the issue author's text: only the run's own `Fixes #N` may close an issue, and no URL of
 * it links a host the operator did not allow.
 */
function commitMessage(options: Pick<CommitPatchOptions, "issueTitle" | "issueNumber" | "links">): string {
  return `${neutralisePlainText(options.issueTitle, options.links ?? GITHUB_COM_LINKS)}\n\nFixes #${options.issueNumber}\n`;
}

/** git applies a patch only when its last line ends: a submission's final newline may be trimmed. */
function endedByNewline(patch: string): string {
  return patch.endsWith("\n") ? patch : `${patch}\n`;
}

/** git's options that make the app the committer (and, with no --author, the author). */
function asIdentity({ name, email }: CommitIdentity): string[] {
  return ["-c", `user.name=${name}`, "-c", `user.email=${email}`];
}

/** The path check of commitPatch, on the changes staged in `dir`. */
async function refuseForbidden(dir: string, forbiddenPaths: readonly string[]) {
  return refuseForbiddenChanges(await stagedChanges(dir), forbiddenPaths);
}

function refuseForbiddenChanges(changes: ChangedEntry[], forbiddenPaths: readonly string[]): ChangedEntry[] {
  const forbidden = forbiddenEntries(changes, forbiddenPaths);
  if (forbidden.length > 0) {
    const list = forbidden.map((f) => `${f.path} (${f.reason})`).join(", ");
    throw new AgentFixError(`The change touches paths the agent may not change: ${list}`, {
      code: "forbidden_path",
      fault: "model",
      hint: "Nothing was pushed. Adjust `forbiddenPaths` in .github/agent-fix.yml if this change is wanted.",
    });
  }
  return changes;
}

/**
 * The commit of a tested change made without touching the checkout's files, index or HEAD: the tested
 * `tree` itself, whose objects the gate wrote into the checkout's store (prepare/workspace-tree.ts), so
 * the commit has exactly the tree the tests ran on. Checked as commitPatch checks a change (the paths
 * from `baseSha` to it), then committed with commit-tree as the app, onto `baseSha`. Made beside the
 * gate's tests, so the push step finds it ready; it rejects where commitPatch would refuse (or git
 * fails), and the push step then commits as usual, which says why. Returns the commit.
 */
export async function commitAhead(
  options: Omit<CommitPatchOptions, "patch"> & { baseSha: string; tree: string },
): Promise<string> {
  const { dir } = options;
  const changes = await changesBetween(dir, options.baseSha, options.tree);
  if (changes.length === 0) {
    throw new AgentFixError("The agent submitted no change", { code: "empty_patch", fault: "model" });
  }
  refuseForbiddenChanges(changes, options.forbiddenPaths);
  const commit = ["commit-tree", options.tree, "-p", options.baseSha, "-F", "-"];
  return (
    await git([...asIdentity(options.identity), ...commit], { cwd: dir, input: commitMessage(options) })
  ).trim();
}

/**
 * Pushes a commit (HEAD by default) to the issue's branch. Only that branch is ever force-pushed (the `+` of one refspec).
 * `token` is minted just before the call: GitHub may refuse it for a few seconds, so that is retried.
 */
export async function pushFixBranch(options: {
  dir: string;
  issueNumber: number;
  token: string;
  signal?: AbortSignal;
  /** false: a fast-forward only (review runs add a commit on top; someone else's push is never lost). */
  force?: boolean;
  /** Replaces the branch only while it is still at this commit (`--force-with-lease`): a rebase's replay. */
  lease?: string;
  /** The commit to push (default HEAD): one commitAhead made. */
  commit?: string;
}): Promise<string> {
  const branch = fixBranch(options.issueNumber);
  const force = (options.force ?? true) && !options.lease;
  const mintedAt = Date.now();
  const lease = options.lease ? [`--force-with-lease=refs/heads/${branch}:${options.lease}`] : [];
  const push = () =>
    git(
      [
        "push",
        "--quiet",
        ...lease,
        "origin",
        `${force ? "+" : ""}${options.commit ?? "HEAD"}:refs/heads/${branch}`,
      ],
      {
        cwd: options.dir,
        token: options.token,
        signal: options.signal,
      },
    );
  await retryWhileTokenIsNew(push, { mintedAt, signal: options.signal }).catch((error: unknown) => {
    // A rule refusing the push says "[remote rejected]"; only "[rejected]" means the branch moved.
    const refused = pushRefusal(error, branch);
    if (refused) throw refused;
    if (force || !/\[rejected\].*\((?:non-fast-forward|fetch first|stale info)\)/.test(String(error)))
      throw error;
    throw new AgentFixError(`${branch} moved while the agent worked, so its commit was not pushed`, {
      code: "branch_moved",
      fault: "user",
      hint: "Someone pushed to the branch during the run. Request changes again to start from the new commits.",
      cause: error,
    });
  });
  return branch;
}
