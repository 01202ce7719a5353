/**
 * GET /repos/{owner}/{repo}/contents/{path} as GitHub documents it for files, symlinks and directories: a
 * file's content in base64; a symlink whose target is a regular file in the repository answers with that
 * file's content; any other symlink answers `type: "symlink"` with its `target` and no content; a
 * directory (the root too: an empty path) answers the array of its entries, without content.
 */
import { execFile } from "node:child_process";
import { posix } from "node:path";
import { promisify } from "node:util";

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
  sha: string;
}

async function treeEntry(bare: string, ref: string, path: string): Promise<TreeEntry | null> {
  const { stdout } = await run("git", ["ls-tree", "-z", ref, "--", path], { cwd: bare }).catch(() => ({
    stdout: "",
  }));
  const match = /^(\d+) (\w+) ([0-9a-f]+)\t/.exec(stdout);
  const [, mode = "", type = "", sha = ""] = match ?? [];
  return type === "blob" ? { mode, sha } : null;
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

/** The entry at `path` on `ref` of the bare repository, or null when there is no file there. */
export async function contentsEntry(bare: string, ref: string, path: string): Promise<ContentsEntry | null> {
  const entry = await treeEntry(bare, ref, path);
  if (!entry) return null;
  const data = await blob(bare, entry.sha);
  if (entry.mode !== "120000") return fileEntry(path, entry.sha, data);
  const target = data.toString("utf8");
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  const inside = !posix.isAbsolute(target) && resolved !== ".." && !resolved.startsWith("../");
  const pointee = inside ? await treeEntry(bare, ref, resolved) : null;
  if (pointee && pointee.mode !== "120000")
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

/** The entries of the directory at `path` ("" for the root) on `ref`, or null when there is no directory there. */
export async function contentsListing(
  bare: string,
  ref: string,
  path: string,
): Promise<ListingEntry[] | null> {
  const dir = path.replace(/\/+$/, "");
  if (dir !== "") {
    const { stdout } = await run("git", ["ls-tree", "-z", ref, "--", dir], { cwd: bare }).catch(() => ({
      stdout: "",
    }));
    if (!/^\d+ tree /.test(stdout)) return null;
  }
  const { stdout } = await run("git", ["ls-tree", "-z", "--long", ref, "--", dir === "" ? "." : `${dir}/`], {
    cwd: bare,
  }).catch(() => ({ stdout: "" }));
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
