/** A repository committed in a temp dir, as the worker's checkout would hold it: the start of a prepare test. */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/** Commits everything in `dir` (a new repository on main); the commit's sha. */
export function commitAll(dir: string, message = "c"): string {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], { cwd: dir });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-qm", message);
  return git("rev-parse", "HEAD").toString().trim();
}

/** `files` (path -> text) written to `<root>/repo` and committed; its directory and head commit. */
export async function committedRepository(
  root: string,
  files: Record<string, string>,
): Promise<{ dir: string; head: string }> {
  const dir = join(root, "repo");
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return { dir, head: commitAll(dir) };
}
