import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { AgentFixError } from "../../../src/shared/errors.js";
import { git } from "./git.js";
import { retryWhileTokenIsNew } from "./git-refusals.js";

interface CheckoutOptions {
  /** `https://HOST/OWNER/REPO.git`; must hold no credentials. */
  cloneUrl: string;
  token: string;
  /** Empty or missing directory to clone into. */
  dir: string;
  /** Branch to check out (the default branch). */
  branch: string;
  /** History depth; 1 (shallow) by default, 0 for the full history. */
  depth?: number;
  signal?: AbortSignal;
}

export interface Checkout {
  dir: string;
  branch: string;
  headSha: string;
}

/**
 * The run's checkout step: clone on the host. The token travels as a header only; the result holds
 * no credential. `token` is minted just before the call: GitHub may refuse it for a few seconds, so that is
 * retried.
 */
export async function cloneRepository(options: CheckoutOptions): Promise<Checkout> {
  const url = new URL(options.cloneUrl);
  if (url.username || url.password) {
    throw new AgentFixError("The clone URL must not carry credentials", {
      code: "clone_url_has_credentials",
      fault: "internal",
      hint: "Pass the token separately; it is sent as an HTTP header.",
    });
  }
  const depth = options.depth ?? 1;
  const args = ["clone", "--quiet", "--no-tags", "--single-branch", "--branch", options.branch];
  if (depth > 0) args.push("--depth", String(depth));
  args.push("--", options.cloneUrl, options.dir);
  const mintedAt = Date.now();
  await retryWhileTokenIsNew(() => git(args, { token: options.token, signal: options.signal }), {
    mintedAt,
    signal: options.signal,
  });
  await proveNoToken(options.dir, options.token);
  const headSha = (await git(["rev-parse", "HEAD"], { cwd: options.dir })).trim();
  return { dir: options.dir, branch: options.branch, headSha };
}

/**
 * Proves the token is nowhere in a checkout's git metadata: the checkout is copied into the sandbox whole,
 * `.git` included. Nothing there should hold it: the token went to git as an environment variable (never
 * into .git/config) and the clone URL was checked to carry no credentials (it becomes the remote's URL).
 */
async function proveNoToken(dir: string, token: string): Promise<void> {
  const leaks = await filesContaining(join(dir, ".git"), token, ["objects"]);
  if (leaks.length > 0) {
    throw new AgentFixError(`The installation token was found in ${leaks.join(", ")} after cloning`, {
      code: "token_in_checkout",
      fault: "internal",
    });
  }
}

/** Files under `dir` (skipping the named top-level folders) whose bytes contain `needle`. */
export async function filesContaining(dir: string, needle: string, skip: string[] = []): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string, top: boolean): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (top && skip.includes(entry.name)) continue;
      const full = join(path, entry.name);
      if (entry.isDirectory()) await walk(full, false);
      else if (entry.isFile() && (await stat(full)).size < 16 * 1024 * 1024) {
        if ((await readFile(full)).includes(needle)) found.push(full);
      }
    }
  };
  await walk(dir, true);
  return found;
}
