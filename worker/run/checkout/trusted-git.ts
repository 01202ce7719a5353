/**
 * Git on the host over the worker's own checkout only (never a `.git` the agent could write), with
 * everything that could run a command switched off: hooks, fsmonitor, external diff and textconv,
 * system and global config. Output and input are bytes, so binary content is never mangled.
 */
import { execFile } from "node:child_process";
import { AgentFixError } from "../../../src/shared/errors.js";

/** Config that no repository setting can turn back on for one command (`-c` wins over .git/config). */
const HARDENING = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "diff.external=",
  "-c",
  "core.pager=cat",
  "-c",
  "core.quotepath=false",
  "-c",
  "gc.auto=0",
  "-c",
  "color.ui=false",
];

interface TrustedGitOptions {
  /** The worker's git directory (its checkout's `.git`). */
  gitDir: string;
  /** A work tree for the commands that read one (check-ignore); data only, never a `.git`. */
  workTree?: string;
  /** A temporary index instead of the checkout's own. */
  indexFile?: string;
  input?: Buffer | string;
  signal?: AbortSignal;
  /** Exit statuses that are answers, not failures (check-ignore exits 1 when nothing is ignored). */
  okExitCodes?: readonly number[];
  /** false for check-ignore, which refuses GIT_LITERAL_PATHSPECS (its paths start with `./` instead). */
  literalPathspecs?: boolean;
}

/** Runs `git ARGS` against the worker's git directory and resolves with its stdout as bytes. */
export function trustedGit(args: string[], options: TrustedGitOptions): Promise<Buffer> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_DIR: options.gitDir,
    LC_ALL: "C",
    // Every path is a name, never pathspec magic (`:(glob)**`, `:!y`); no caller relies on magic.
    // check-ignore refuses even literal magic: it opts out and passes its paths as `./NAME`.
    GIT_LITERAL_PATHSPECS: options.literalPathspecs === false ? "0" : "1",
  };
  if (options.workTree) env.GIT_WORK_TREE = options.workTree;
  if (options.indexFile) env.GIT_INDEX_FILE = options.indexFile;
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      [...HARDENING, ...args],
      {
        env,
        encoding: "buffer",
        maxBuffer: 512 * 1024 * 1024,
        ...(options.signal ? { signal: options.signal } : {}),
        // Inside the git directory unless a work tree is named: no work tree is then found at all.
        cwd: options.workTree ?? options.gitDir,
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const status = (error as { code?: unknown }).code;
        if (typeof status === "number" && options.okExitCodes?.includes(status)) return resolve(stdout);
        reject(
          new AgentFixError(`git ${args[0]} failed: ${stderr.toString("utf8").trim() || error.message}`, {
            code: "host_git_failed",
            fault: "internal",
            cause: error,
          }),
        );
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
