/** A directory as detection sees a repository: its file list, and the texts of the files detection asks for. */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { detectCommands, filesToRead } from "../../worker/config/detect/index.js";

export async function detectDirectory(root: string) {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
  const wanted = filesToRead(paths);
  const contents = new Map(
    await Promise.all(wanted.map(async (path) => [path, await readFile(join(root, path), "utf8")] as const)),
  );
  return { ...detectCommands({ paths, contents }), read: wanted };
}
