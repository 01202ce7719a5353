import { execFile } from "node:child_process";
import { AgentFixError } from "../../../src/shared/errors.js";

interface GitOptions {
  cwd?: string;
  /** Installation token sent as an HTTP header through the environment: never in argv, a URL or .git/config. */
  token?: string;
  signal?: AbortSignal | undefined;
  /** Written to git's stdin. */
  input?: string;
  /** An index of its own (GIT_INDEX_FILE) instead of the checkout's. */
  indexFile?: string;
}

/** The Authorization header GitHub (and git http-backend stand-ins) accept for an installation token. */
export function authHeader(token: string): string {
  return `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
}

/**
 * Runs git on the host with a clean environment: no prompts, no credential helpers, no user or system
 * config, and the token (when given) as `http.extraheader` through GIT_CONFIG_* variables, so it shows
 * in neither the process list nor any file.
 */
export function git(args: string[], options: GitOptions = {}): Promise<string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    LC_ALL: "C",
    // Paths are names, never pathspec magic (`:(glob)**`, `:!y`): see trusted-git.ts.
    GIT_LITERAL_PATHSPECS: "1",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "credential.helper",
    GIT_CONFIG_VALUE_0: "",
  };
  if (options.indexFile) env.GIT_INDEX_FILE = options.indexFile;
  if (options.token) {
    env.GIT_CONFIG_COUNT = "2";
    env.GIT_CONFIG_KEY_1 = "http.extraheader";
    env.GIT_CONFIG_VALUE_1 = authHeader(options.token);
  }
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      args,
      { cwd: options.cwd, env, signal: options.signal, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const detail = redact(`${stderr}`.trim() || error.message, options.token);
        reject(
          new AgentFixError(`git ${args[0]} failed: ${detail}`, {
            code: `git_${args[0]}_failed`,
            fault: "github",
            // Network and server errors are worth another try; a rejected patch or push is not.
            retryable: /unable to access|Could not resolve|timed out|HTTP 5\d\d|RPC failed|early EOF/i.test(
              detail,
            ),
            cause: error,
          }),
        );
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** Never let a token reach a log line or a status comment. */
function redact(text: string, token: string | undefined): string {
  if (!token) return text;
  return text
    .split(token)
    .join("***")
    .split(Buffer.from(`x-access-token:${token}`).toString("base64"))
    .join("***");
}
