/**
 * What the stand-in reads and writes of a bare repository's history for the compare, merges and
 * pull request endpoints: commits with their authors, merge bases, and merges computed by git
 * (`git merge-tree --write-tree`, no work tree), so every answer agrees with the git server.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BoundedMap } from "../bounded-map.js";
import { execInHelper } from "../exec-in-helper.js";
import { branchCommit, OBJECT_ID } from "../git-server.js";

/** git in the stand-in's bare repository `cwd`: its stdout as text. */
const run = (file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) =>
  execInHelper(file, args, options).then(({ stdout }) => ({ stdout: stdout.toString("utf8") }));

interface GitPerson {
  name: string;
  email: string;
  date: string;
}

export interface GitCommit {
  sha: string;
  tree: string;
  parents: string[];
  author: GitPerson;
  committer: GitPerson;
  message: string;
}

const git = (bare: string, ...args: string[]) => run("git", args, { cwd: bare }).then(({ stdout }) => stdout);

const FORMAT = ["%H", "%T", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%B"].join("%x00");

function parse(record: string): GitCommit {
  const [sha = "", tree = "", parents = "", an = "", ae = "", ad = "", cn = "", ce = "", cd = "", ...rest] =
    record.replace(/^\n/, "").split("\0");
  const iso = (date: string) => new Date(date).toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    sha,
    tree,
    parents: parents.split(" ").filter(Boolean),
    author: { name: an, email: ae, date: iso(ad) },
    committer: { name: cn, email: ce, date: iso(cd) },
    message: rest.join("\0").replace(/\n+$/, ""),
  };
}

/** Commits of `git log ARGS`, oldest first. */
async function log(bare: string, ...args: string[]): Promise<GitCommit[]> {
  const out = await git(bare, "log", "--reverse", `--format=${FORMAT}%x1e`, ...args);
  return out
    .split("\x1e")
    .filter((r) => r.trim() !== "")
    .map(parse);
}

/**
 * What git answered about objects of a repository, by the object ids asked about: a commit, a merge
 * base or a merge's tree never changes once its objects exist, and a pull request's mergeability, a
 * check suite's head commit or a compare reads the same ones over and over (each a git process, which
 * blocks the event loop of the test's process). Only answers about object ids are kept, never about a
 * name (a branch moves), and only those git gave (an object id that names nothing now may be pushed
 * later). Bounded, so that a vitest worker that runs many files keeps little of it.
 */
const known = new BoundedMap<string, unknown>(2_000);

async function byObjectIds<T>(
  bare: string,
  what: string,
  ids: string[],
  ask: () => Promise<T>,
  keep: (answer: T) => boolean = () => true,
): Promise<T> {
  if (!ids.every((id) => OBJECT_ID.test(id))) return ask();
  const key = [bare, what, ...ids].join("\0");
  if (known.has(key)) return known.get(key) as T;
  const answer = await ask();
  if (keep(answer)) known.set(key, answer);
  return answer;
}

export function readCommit(bare: string, sha: string): Promise<GitCommit> {
  return byObjectIds(bare, "commit", [sha], async () => {
    const [commit] = await log(bare, "-1", sha);
    if (!commit) throw new Error(`no commit ${sha}`);
    return commit;
  });
}

/**
 * The commit a ref (branch, tag, SHA) names, or null. A branch is read from the ref files, without git;
 * an object id git found is kept.
 */
export async function resolveCommit(bare: string, ref: string): Promise<string | null> {
  const branch = await branchCommit(bare, ref);
  if (branch !== undefined) return branch;
  return byObjectIds(
    bare,
    "commit-of",
    [ref],
    () =>
      git(bare, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`).then(
        (out) => out.trim(),
        () => null,
      ),
    (commit) => commit !== null,
  );
}

export function mergeBase(bare: string, a: string, b: string): Promise<string | null> {
  return byObjectIds(
    bare,
    "merge-base",
    [a, b],
    () =>
      git(bare, "merge-base", a, b).then(
        (out) => out.trim(),
        () => null,
      ),
    // No merge base, or an object git does not have (yet): asked again next time.
    (base) => base !== null,
  );
}

/** Commits reachable from `head` and not from `base`, oldest first (GitHub's compare order). */
export function commitsBetween(bare: string, base: string, head: string): Promise<GitCommit[]> {
  return log(bare, `${base}..${head}`);
}

/** The tree of merging `theirs` into `ours`, or null when they conflict. */
export async function mergeTree(bare: string, ours: string, theirs: string): Promise<string | null> {
  const tree = await byObjectIds(
    bare,
    "merge-tree",
    [ours, theirs],
    () =>
      git(bare, "merge-tree", "--write-tree", ours, theirs).then(
        (out) => out.split("\n")[0]?.trim() ?? null,
        // git merge-tree exits 1 on conflicts, printing the conflicted tree and the paths; anything else
        // (an object it does not have) is no answer, asked again next time.
        (error: unknown) => ((error as { code?: unknown }).code === 1 ? null : undefined),
      ),
    (answer) => answer !== undefined,
  );
  return tree ?? null;
}

/**
 * Merges `head` into branch `base` as POST /repos/{owner}/{repo}/merges does: "nothing" when `head` is
 * already in `base`, "conflict" when they conflict, else the new merge commit, on the branch now.
 */
export async function mergeInto(
  bare: string,
  base: string,
  baseSha: string,
  headSha: string,
  message: string,
  author: { name: string; email: string },
): Promise<"nothing" | "conflict" | string> {
  if ((await mergeBase(bare, baseSha, headSha)) === headSha) return "nothing";
  const tree = await mergeTree(bare, baseSha, headSha);
  if (!tree) return "conflict";
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    // GitHub commits what its API merges as itself.
    GIT_COMMITTER_NAME: "GitHub",
    GIT_COMMITTER_EMAIL: "noreply@github.com",
  };
  const { stdout } = await run("git", ["commit-tree", tree, "-p", baseSha, "-p", headSha, "-m", message], {
    cwd: bare,
    env,
  });
  const sha = stdout.trim();
  // The branch moves only if no push moved it meanwhile, as GitHub's merge does.
  await git(bare, "update-ref", `refs/heads/${base}`, sha, baseSha);
  return sha;
}

/** A changed file between two commits: its blob, status and line counts (a diff-entry's fields). */
interface GitChange {
  filename: string;
  previousFilename?: string;
  status: "added" | "removed" | "modified" | "renamed" | "copied" | "changed";
  sha: string;
  additions: number;
  deletions: number;
}

const CHANGE: Record<string, GitChange["status"]> = {
  A: "added",
  D: "removed",
  M: "modified",
  R: "renamed",
  C: "copied",
  T: "changed",
};

/** The files changed from `base` to `head`, as GitHub's compare lists them. */
export async function changesBetween(bare: string, base: string, head: string): Promise<GitChange[]> {
  const raw = (await git(bare, "diff", "--raw", "-z", "-M", "--no-abbrev", base, head)).split("\0");
  const counts = (await git(bare, "diff", "--numstat", "-z", "-M", base, head)).split("\0");
  const changes: GitChange[] = [];
  for (let i = 0; i < raw.length - 1; ) {
    const [, , oldSha = "", newSha = "", code = "M"] = (raw[i] ?? "").slice(1).split(" ");
    const renamed = code.startsWith("R") || code.startsWith("C");
    const first = raw[i + 1] ?? "";
    const second = renamed ? raw[i + 2] : undefined;
    i += renamed ? 3 : 2;
    const status = CHANGE[code[0] ?? "M"] ?? "modified";
    changes.push({
      filename: second ?? first,
      ...(second ? { previousFilename: first } : {}),
      status,
      sha: status === "removed" ? oldSha : newSha,
      additions: 0,
      deletions: 0,
    });
  }
  // --numstat -z: "ADDED\tDELETED\tPATH" or, for a rename, "ADDED\tDELETED\t" then two paths.
  for (let i = 0, n = 0; i < counts.length - 1 && n < changes.length; n++) {
    const [added = "0", deleted = "0", path = ""] = (counts[i] ?? "").split("\t");
    i += path === "" ? 3 : 1;
    const change = changes[n];
    if (change) {
      change.additions = Number(added) || 0;
      change.deletions = Number(deleted) || 0;
    }
  }
  return changes;
}

/**
 * A commit of `files` (path -> text; null deletes) on `branch`, on top of `parent`, written straight
 * into the bare repository as GitHub's web editor or a merge would (no hook runs: the default branch
 * moves too). The branch is created when it does not exist. Returns the new commit.
 */
export async function commitOnBranch(
  bare: string,
  branch: string,
  parent: string,
  files: Record<string, string | null>,
  message: string,
  author: { name: string; email: string },
): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), "af-commit-"));
  const env = {
    ...process.env,
    GIT_INDEX_FILE: join(scratch, "index"),
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
  };
  const inBare = async (args: string[]) => (await run("git", args, { cwd: bare, env })).stdout.trim();
  try {
    await inBare(["read-tree", parent]);
    for (const [path, text] of Object.entries(files)) {
      if (text === null) await inBare(["update-index", "--force-remove", "--", path]);
      else {
        await writeFile(join(scratch, "blob"), text);
        const blob = await inBare(["hash-object", "-w", "--", join(scratch, "blob")]);
        await inBare(["update-index", "--add", "--cacheinfo", `100644,${blob},${path}`]);
      }
    }
    const tree = await inBare(["write-tree"]);
    const sha = await inBare(["commit-tree", tree, "-p", parent, "-m", message]);
    await inBare(["update-ref", `refs/heads/${branch}`, sha]);
    return sha;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
