/**
 * Warm start (the run's prepare step): the environment setup prepared is kept (the provider's
 * PreparedEnvironments, a committed image on Docker) with the files setup produced in the workspace, and
 * a later run of the same key skips setup: its sandboxes start from the kept image, which lays the kept
 * files in their workspace itself, and its prepared tree on the host is the new checkout over only the
 * kept files the host's tree walks (none under a directory it skips, such as node_modules): nothing large
 * is unpacked on the host.
 */
import { cp, mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { KeptEnvironment, PreparedEnvironments, Sandbox } from "../../../src/shared/contracts.js";
import { AgentFixError } from "../../../src/shared/errors.js";
import { trustedGit } from "../checkout/trusted-git.js";
import { searchedForms } from "./secret-scan.js";
import { extractArchive, type ReceiveLimits } from "./workspace-archive.js";
import { type BaseCommit, skippedDirs } from "./workspace-tree.js";

/**
 * The kept environment's workspace files the host needs (`kept`, a tar of one top directory) under `dir`,
 * then the checkout's own files over them (its tracked files always win), then the trusted `.git`.
 */
export async function layKeptWorkspace(
  kept: Readable,
  checkoutDir: string,
  root: string,
  dir: string,
  limits: ReceiveLimits,
): Promise<void> {
  const landing = join(root, "kept");
  await mkdir(landing);
  await extractArchive(kept, landing, limits);
  const [top] = await readdir(landing);
  if (top) await rename(join(landing, top), dir);
  else await mkdir(dir);
  // Never kept by this worker (producedFiles skips it): whatever setup planted there goes.
  await rm(join(dir, ".git"), { recursive: true, force: true });
  await layCheckoutOver(checkoutDir, dir);
}

/** A checkout's files over `dir` (its tracked files always win), then its trusted `.git`. */
export async function layCheckoutOver(checkoutDir: string, dir: string): Promise<void> {
  const gitDir = join(checkoutDir, ".git");
  await cp(checkoutDir, dir, {
    recursive: true,
    force: true,
    verbatimSymlinks: true,
    filter: (source) => source !== gitDir,
  });
  await cp(gitDir, join(dir, ".git"), { recursive: true, verbatimSymlinks: true });
}

/** Whether `path` lies under a directory the host's tree skips (sandboxes alone need what is there). */
function underSkippedDir(path: string, skipped: ReadonlySet<string>): boolean {
  return path
    .split("/")
    .slice(0, -1)
    .some((name) => skipped.has(name));
}

/**
 * Every file and symlink of `dir` the base commit does not track: what setup produced. Only real
 * directories are entered: a symlink is an entry, never followed.
 */
export async function producedFiles(dir: string, base: BaseCommit): Promise<string[]> {
  const found: string[] = [];
  const visit = async (relative: string): Promise<void> => {
    for (const entry of await readdir(join(dir, relative), { withFileTypes: true })) {
      if (relative === "" && entry.name === ".git") continue;
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await visit(path);
      else if (!base.tracked.has(path)) found.push(path);
    }
  };
  await visit("");
  return found;
}

/**
 * Whether setup left every tracked file as it was: what it wrote to them belongs to the old checkout, so
 * a later run could not reproduce it by laying the new checkout over the kept files.
 */
async function tracksUnchanged(base: BaseCommit, tree: string): Promise<boolean> {
  const out = await trustedGit(["diff-tree", "-r", "--no-renames", "--name-status", base.tree, tree], {
    gitDir: base.gitDir,
  });
  return out
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .every((line) => line.startsWith("A"));
}

interface KeepOptions {
  store: PreparedEnvironments;
  sandbox: Sandbox;
  key: string;
  repository: string;
  /** The prepared tree: the files setup left, already scanned for the secrets. */
  dir: string;
  tree: string;
  base: BaseCommit;
  secrets: Record<string, string>;
}

/** Keeps setup's container; a secret in what would be kept stops the run (nothing is kept). */
export async function keepEnvironment(options: KeepOptions): Promise<KeptEnvironment> {
  const { store, sandbox, base } = options;
  const files = await producedFiles(options.dir, base);
  const skipped = new Set(skippedDirs(base));
  const sandboxOnly = files.filter((path) => underSkippedDir(path, skipped));
  const kept = await store.keep(sandbox, {
    key: options.key,
    repository: options.repository,
    reusable: await tracksUnchanged(base, options.tree),
    workspace: {
      dir: options.dir,
      files,
      hostFiles: files.filter((path) => !underSkippedDir(path, skipped)),
    },
    secrets: Object.entries(options.secrets).flatMap(([name, value]) => {
      const forms = searchedForms(value);
      return forms.length > 0 ? [{ name, forms }] : [];
    }),
  });
  if ("image" in kept) {
    // Every later sandbox of this run starts from the kept image, which holds these: the host copy of
    // them would only be sent in again.
    await Promise.all(sandboxOnly.map((path) => rm(join(options.dir, path), { force: true })));
    return kept;
  }
  const where = [...new Set(kept.hits.map((hit) => `${hit.path} (${hit.name})`))].join(", ");
  throw new AgentFixError(
    `Setup wrote the value of a setup secret outside the repository's files: ${where}`,
    {
      code: "secret_in_environment",
      fault: "repository",
      hint:
        "The environment setup prepared is kept for the agent and later runs, so it was not kept and the run " +
        "stopped before the agent started. Pass credentials to package managers through environment " +
        "variables, or write them under $HOME or /tmp (both discarded with setup's sandbox), never to /etc, " +
        "/usr or /root.",
    },
  );
}
