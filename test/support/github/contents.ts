/**
 * GET /repos/{owner}/{repo}/contents/{path} as GitHub documents it for files and symlinks: a file's
 * content in base64; a symlink whose target is a regular file in the repository answers with that file's
 * content; any other symlink answers `type: "symlink"` with its `target` and no content.
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
