/**
 * GET /repos/{owner}/{repo}/contents/{path} as GitHub documents it for files, symlinks and directories: a
 * file's content in base64; a symlink whose target is a regular file in the repository answers with that
 * file's content; any other symlink answers `type: "symlink"` with its `target` and no content; a
 * directory (the root too: an empty path) answers the array of its entries, without content.
 */
import { execFile } from "node:child_process";
import { posix } from "node:path";
import { promisify } from "node:util";
import { branchCommit } from "../git-server.js";

const run = promisify(execFile);

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

interface TreeEntry {
  mode: string;
  type: string;
  sha: string;
}

/**
 * The entry of `path` on `ref` (a blob, tree or submodule): null when there is none there, undefined
 * when `ref` names no commit (git ls-tree fails; a path that is not there is an empty answer).
 */
async function treeEntry(bare: string, ref: string, path: string): Promise<TreeEntry | null | undefined> {
  const listed = await run("git", ["ls-tree", "-z", ref, "--", path], { cwd: bare }).then(
    ({ stdout }) => stdout,
    () => undefined,
  );
  if (listed === undefined) return undefined;
  const match = /^(\d+) (\w+) ([0-9a-f]+)\t/.exec(listed);
  const [, mode = "", type = "", sha = ""] = match ?? [];
  return match ? { mode, type, sha } : null;
}

async function blob(bare: string, sha: string): Promise<Buffer> {
  const { stdout } = await run("git", ["cat-file", "blob", sha], { cwd: bare, encoding: "buffer" });
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

/** The entry of the blob at `path` (its tree entry `entry`) on `ref`: a file, or a symlink resolved. */
async function blobEntry(bare: string, ref: string, path: string, entry: TreeEntry): Promise<ContentsEntry> {
  const data = await blob(bare, entry.sha);
  if (entry.mode !== "120000") return fileEntry(path, entry.sha, data);
  const target = data.toString("utf8");
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  const inside = !posix.isAbsolute(target) && resolved !== ".." && !resolved.startsWith("../");
  const pointee = inside ? await treeEntry(bare, ref, resolved) : null;
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

/** The entries of the directory `dir` ("" for the root) on `ref`; undefined when `ref` names no commit. */
async function listing(bare: string, ref: string, dir: string): Promise<ListingEntry[] | undefined> {
  const stdout = await run("git", ["ls-tree", "-z", "--long", ref, "--", dir === "" ? "." : `${dir}/`], {
    cwd: bare,
  }).then(
    (listed) => listed.stdout,
    () => undefined,
  );
  if (stdout === undefined) return undefined;
  return stdout
    .split("\0")
    .filter((line) => line !== "")
    .map((line) => {
      const [meta = "", entryPath = ""] = line.split("\t");
      const [mode = "", type = "", sha = "", size = "-"] = meta.trim().split(/\s+/);
      const kind =
        type === "tree" ? "dir" : type === "commit" ? "submodule" : mode === "120000" ? "symlink" : "file";
      return {
        type: kind,
        name: entryPath.split("/").pop() ?? entryPath,
        path: entryPath,
        sha,
        size: size === "-" ? 0 : Number(size),
      };
    });
}

/** What the contents API answers for a path: a file or symlink, a directory's entries, or nothing (404). */
type Contents = ContentsEntry | ListingEntry[] | null;

/**
 * Answers by repository, the commit (or tree) they were read from and the path, which never change: every run reads
 * the same few files (the config, CODEOWNERS, the devcontainer) of the same commit, mostly absent, and
 * each read was two or three git processes. A name (a branch) is resolved to its commit on each request,
 * so a branch that moves is read again. Bounded, so that a vitest worker that runs many files keeps
 * little of it.
 */
const answers = new Map<string, Contents>();
const KEPT_ANSWERS = 2_000;

/**
 * The contents at `path` on `ref` of the bare repository: the file (or symlink) there, the entries of
 * the directory there (the root for an empty path), or null when there is neither or `ref` names no
 * commit.
 */
export async function contentsAt(bare: string, ref: string, path: string): Promise<Contents> {
  const objectId = /^[0-9a-f]{40}$/.test(ref) ? ref : await branchCommit(bare, ref);
  const key = objectId ? `${bare}\0${objectId}\0${path}` : undefined;
  const known = key === undefined ? undefined : answers.get(key);
  if (known !== undefined) return structuredClone(known);
  const at = objectId ?? ref;
  const dir = path.replace(/\/+$/, "");
  const entry = dir === "" ? null : await treeEntry(bare, at, dir);
  let answer: Contents | undefined;
  if (entry === undefined) answer = undefined;
  else if (dir === "" || entry?.type === "tree") answer = await listing(bare, at, dir);
  // A file's path with a slash after it names a directory, and there is none.
  else if (entry?.type === "blob" && dir === path) answer = await blobEntry(bare, at, dir, entry);
  else answer = null;
  // `ref` names no commit: not kept, as an object id that names nothing now may be pushed later.
  if (answer === undefined) return null;
  if (key !== undefined) {
    if (answers.size >= KEPT_ANSWERS) answers.delete(answers.keys().next().value ?? "");
    answers.set(key, answer);
  }
  return structuredClone(answer);
}
