/**
 * GET /repos/{owner}/{repo}/contents/{path} as GitHub documents it for files, symlinks and directories: a
 * file's content in base64; a symlink whose target is a regular file in the repository answers with that
 * file's content; any other symlink answers `type: "symlink"` with its `target` and no content; a
 * directory (the root too: an empty path) answers the array of its entries, without content.
 */
import { posix } from "node:path";
import { BoundedMap } from "../bounded-map.js";
import { execInHelper } from "../exec-in-helper.js";
import { OBJECT_ID } from "../git-server.js";
import { resolveCommit } from "./git-history.js";

type ContentsEntry =
  | {
      type: "file";
      encoding: "base64";
      content: string;
      path: string;
      name: string;
      size: number;
      sha: string;
    }
  | { type: "symlink"; target: string; path: string; name: string; size: number; sha: string };

/** An entry of a commit's tree, as `git ls-tree --long` lists it. */
interface TreeEntry {
  path: string;
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  /** A blob's size; 0 for a tree or a submodule. */
  size: number;
}

/** Every entry of a commit's tree, in git's order, and by path. */
interface Tree {
  entries: TreeEntry[];
  byPath: Map<string, TreeEntry>;
}

/**
 * Whole trees by repository and commit, each read with one git process: a run reads a handful of paths
 * of the same commit (the config, CODEOWNERS where GitHub looks for it, the devcontainer, the PR
 * template, mostly absent), which were a process or three each. Bounded: a few runs' commits.
 */
const trees = new BoundedMap<string, Tree>(50);

/** The tree of `commit` (an object id), or undefined when the repository has no such commit. */
async function treeOf(bare: string, commit: string): Promise<Tree | undefined> {
  const key = `${bare}\0${commit}`;
  const kept = trees.get(key);
  if (kept) return kept;
  const listed = await execInHelper("git", ["ls-tree", "-r", "-t", "-z", "--long", commit], {
    cwd: bare,
  }).then(
    ({ stdout }) => stdout.toString("utf8"),
    () => undefined,
  );
  if (listed === undefined) return undefined;
  const entries = listed
    .split("\0")
    .filter((line) => line !== "")
    .map((line): TreeEntry => {
      const [meta = "", path = ""] = line.split("\t");
      const [mode = "", type = "", sha = "", size = "-"] = meta.trim().split(/\s+/);
      return { path, mode, type: type as TreeEntry["type"], sha, size: size === "-" ? 0 : Number(size) };
    });
  const tree = { entries, byPath: new Map(entries.map((entry) => [entry.path, entry])) };
  trees.set(key, tree);
  return tree;
}

async function blob(bare: string, sha: string): Promise<Buffer> {
  const { stdout } = await execInHelper("git", ["cat-file", "blob", sha], { cwd: bare });
  return stdout;
}

function fileEntry(path: string, sha: string, content: Buffer): ContentsEntry {
  const name = path.split("/").pop() ?? path;
  return {
    type: "file",
    encoding: "base64",
    content: content.toString("base64"),
    path,
    name,
    size: content.length,
    sha,
  };
}

/** The blob `entry` of `tree` as the contents API answers it: a file, or a symlink resolved. */
async function blobEntry(bare: string, tree: Tree, entry: TreeEntry): Promise<ContentsEntry> {
  const { path } = entry;
  const data = await blob(bare, entry.sha);
  if (entry.mode !== "120000") return fileEntry(path, entry.sha, data);
  const target = data.toString("utf8");
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  const inside = !posix.isAbsolute(target) && resolved !== ".." && !resolved.startsWith("../");
  const pointee = inside ? tree.byPath.get(resolved) : undefined;
  if (pointee?.type === "blob" && pointee.mode !== "120000")
    return fileEntry(resolved, pointee.sha, await blob(bare, pointee.sha));
  const name = path.split("/").pop() ?? path;
  return { type: "symlink", target, path, name, size: data.length, sha: entry.sha };
}

/** A directory's entry as the contents API lists it. */
interface ListingEntry {
  type: "file" | "dir" | "symlink" | "submodule";
  name: string;
  path: string;
  sha: string;
  size: number;
}

/** The entries of the directory `dir` ("" for the root) of `tree`, in git's order. */
function listing(tree: Tree, dir: string): ListingEntry[] {
  return tree.entries
    .filter((entry) => posix.dirname(entry.path) === (dir === "" ? "." : dir))
    .map((entry) => ({
      type:
        entry.type === "tree"
          ? "dir"
          : entry.type === "commit"
            ? "submodule"
            : entry.mode === "120000"
              ? "symlink"
              : "file",
      name: entry.path.split("/").pop() ?? entry.path,
      path: entry.path,
      sha: entry.sha,
      size: entry.size,
    }));
}

/** What the contents API answers for a path: a file or symlink, a directory's entries, or nothing (404). */
type Contents = ContentsEntry | ListingEntry[] | null;

/**
 * Answers by repository, commit and path, which never change: every run reads the same few files of
 * its commit, and a file's content is a git process more. A name (a branch) is resolved to its commit
 * on each request, so a branch that moves is read again. Bounded, so that a vitest worker that runs many
 * files keeps little of it.
 */
const answers = new BoundedMap<string, Contents>(2_000);

/**
 * The contents at `path` on `ref` (a branch, tag or commit) of the bare repository: the file (or
 * symlink) there, the entries of the directory there (the root for an empty path), or null when there
 * is neither or `ref` names no commit.
 */
export async function contentsAt(bare: string, ref: string, path: string): Promise<Contents> {
  const commit = OBJECT_ID.test(ref) ? ref : await resolveCommit(bare, ref);
  if (!commit) return null;
  const key = `${bare}\0${commit}\0${path}`;
  const known = answers.get(key);
  if (known !== undefined) return structuredClone(known);
  // No such commit (an object id not pushed yet): not kept, it may be pushed later.
  const tree = await treeOf(bare, commit);
  if (!tree) return null;
  const dir = path.replace(/\/+$/, "");
  const entry = dir === "" ? undefined : tree.byPath.get(dir);
  let answer: Contents = null;
  if (dir === "" || entry?.type === "tree") answer = listing(tree, dir);
  // A file's path with a slash after it names a directory, and there is none.
  else if (entry?.type === "blob" && dir === path) answer = await blobEntry(bare, tree, entry);
  answers.set(key, answer);
  return structuredClone(answer);
}
