/** Inputs of `agent-fix run`: the repository (a directory or a git URL) and the issue (a file or text). */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { promisify } from "node:util";
import { ConfigError } from "../../src/shared/errors.js";

const run = promisify(execFile);

export function isGitUrl(repo: string): boolean {
  return /^(https?|ssh|git|file):\/\//.test(repo) || /^[\w.-]+@[\w.-]+:/.test(repo);
}

interface ResolvedRepo {
  dir: string;
  name: string;
  /** Removes the clone (no-op for a local directory). */
  cleanup: () => Promise<void>;
}

/** A local directory is used as it is (the sandbox gets a copy); a git URL is cloned on the host. */
export async function resolveRepo(repo: string): Promise<ResolvedRepo> {
  if (isGitUrl(repo)) {
    const parent = await mkdtemp(join(tmpdir(), "agent-fix-clone-"));
    const dir = join(parent, "repo");
    try {
      await run("git", ["clone", "--depth", "1", "--quiet", repo, dir], { timeout: 300_000 });
    } catch (error) {
      await rm(parent, { recursive: true, force: true });
      const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
      throw new ConfigError(`cannot clone ${repo}: ${detail}`, { code: "repo_clone_failed" });
    }
    const name = basename(repo.replace(/\/+$/, "")).replace(/\.git$/, "");
    return { dir, name, cleanup: () => rm(parent, { recursive: true, force: true }) };
  }
  const dir = resolve(repo);
  // Anything stat cannot see is refused just below, with the path named.
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) {
    throw new ConfigError(`--repo ${repo}: no such directory`, {
      code: "repo_missing",
      hint: "Pass a directory holding the repository, or a git URL to clone.",
    });
  }
  return { dir, name: basename(dir), cleanup: async () => {} };
}

/**
 * The issue from a file (first line the title, a leading `#` dropped; the rest the body) or from the text
 * itself, split the same way.
 */
export async function readIssue(issue: string): Promise<{ title: string; body: string }> {
  // Not a readable file: the argument is the issue's text itself.
  const info = await stat(issue).catch(() => null);
  const text = info?.isFile() ? await readFile(issue, "utf8") : issue;
  const lines = text.replace(/\r\n?/g, "\n").trim().split("\n");
  const title = (lines[0] ?? "").replace(/^#+\s*/, "").trim();
  if (!title) {
    throw new ConfigError("--issue is empty", {
      code: "issue_missing",
      hint: "Pass a file whose first line is the title, or the issue text itself.",
    });
  }
  return { title, body: lines.slice(1).join("\n").trim() };
}

export function runId(repoName: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  const safe = repoName.replace(/[^A-Za-z0-9_.-]+/g, "-").slice(0, 40);
  return `${stamp}-${safe}-${Math.random().toString(36).slice(2, 6)}`;
}
