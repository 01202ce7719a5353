/**
 * The prepared tree (the run's prepare step): the worker's own checkout with the files setup left
 * behind. Setup runs in a sandbox of its own (network and secrets as configured), always on a trusted tree
 * (worker/run/checkout/trusted-tree.ts: the default branch's head); its workspace files, never its `.git`, are
 * unpacked over a copy of the trusted `.git`, then that sandbox is removed with every process it started,
 * its /tmp and its $HOME. The baseline, the agent and every gate start fresh sandboxes from this tree.
 * Where the provider keeps environments, setup's container is kept first, and a later run of the same key
 * skips setup (worker/run/prepare/warm-start.ts). A review run's tree is its pull request branch's tracked
 * files laid over that environment: nothing the agent wrote runs with a secret or network, or is kept.
 */
import { appendFile, cp, mkdir, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { KeptEnvironment, PreparedEnvironments, SetupUser } from "../../../src/shared/contracts.js";
import { AgentFixError } from "../../../src/shared/errors.js";
import { assertTrusted, type TrustedTree } from "../checkout/trusted-tree.js";
import { environmentKey, type RepositoryIdentity } from "./environment-key.js";
import type { RunSandboxes } from "./run-sandboxes.js";
import { findSecrets } from "./secret-scan.js";
import { type DetectedSetup, runSetup, type SetupFallback } from "./setup.js";
import { keepEnvironment, layCheckoutOver, layKeptWorkspace, producedFiles } from "./warm-start.js";
import {
  DEFAULT_INTAKE_LIMITS,
  extractArchive,
  type IntakeLimits,
  workspaceLimits,
} from "./workspace-archive.js";
import { type BaseCommit, loadBaseCommit, treeOfDirectory } from "./workspace-tree.js";

export interface PreparedTree {
  /** Host directory: the trusted `.git` and the files sandboxes start from. */
  dir: string;
  base: BaseCommit;
  /** The tree of the paths that count in `dir` (the base commit's tree when there was no setup). */
  tree: string;
  /** The kept environment this run reused: setup did not run. */
  reused?: KeptEnvironment;
  /** Milliseconds each step of a warm start took (bench/warm.ts reports them). */
  steps?: Record<string, number>;
  /** Detected optional installs that failed, and what setup installed in their place. */
  fallbacks?: SetupFallback[];
}

interface PrepareOptions {
  sandboxes: RunSandboxes;
  /**
   * What setup runs on and the kept environment is prepared from and keyed by: the default branch's
   * checkout (credentials stripped), or the operator's own commit.
   */
  trusted: TrustedTree;
  /**
   * A review run's checkout of its pull request's branch, which the agent wrote: its tracked files are
   * laid over the environment prepared from `trusted`; setup never sees them.
   */
  branch?: { dir: string; headSha: string };
  /** A directory of this run for the prepared copy and temporary files. */
  root: string;
  setup: {
    commands: readonly string[];
    network: boolean;
    timeoutMs: number;
    user?: SetupUser;
    /** When detection wrote the commands: their fallbacks and the snippet a failure shows. */
    detected?: DetectedSetup | undefined;
  };
  secrets: Record<string, string>;
  /** The most the host takes in from setup's export and the kept files (default DEFAULT_INTAKE_LIMITS). */
  intake?: IntakeLimits;
  /**
   * The repository by id and installation (part of the kept environment's key) and its current name (a
   * label of the kept image, for people); without it nothing is kept (eval, local runs).
   */
  repository?: RepositoryIdentity & { fullName: string };
  signal?: AbortSignal;
}

export async function prepareTree(options: PrepareOptions): Promise<PreparedTree> {
  // Setup holds the secrets and network, and what it prepares is kept: a tree of any other ref here
  // would run the agent's files with them and hand what they planted to the next default-branch run.
  assertTrusted(options.trusted);
  const environment = await prepareTrusted(options);
  return options.branch ? layBranch(environment, options.branch, options) : environment;
}

/** Setup on the trusted tree, or the kept environment of a warm start: the environment of the run. */
async function prepareTrusted(options: PrepareOptions): Promise<PreparedTree> {
  const checkoutDir = options.trusted.dir;
  const scratch = join(options.root, "scratch");
  await mkdir(scratch, { recursive: true });
  const base = await loadBaseCommit(join(checkoutDir, ".git"), options.trusted.headSha, scratch);
  await excludeArtefacts(join(checkoutDir, ".git"), base);
  if (options.setup.commands.length === 0) return { dir: checkoutDir, base, tree: base.tree };
  const { sandboxes, repository } = options;
  const user = options.setup.user ?? "agent";
  const store = repository === undefined ? undefined : sandboxes.environments;
  if (!store && user === "root") throw rootNeedsKeeping();
  const dir = join(options.root, "prepared");
  const image = sandboxes.imageChoice;
  const key = environmentKey({
    commands: options.setup.commands,
    network: options.setup.network,
    user,
    repository: repository ?? { id: 0, installationId: 0 },
    image: image ?? undefined,
    env: sandboxes.workspaceEnv,
    base,
    secrets: options.secrets,
  });
  // An image built from the checkout is found by its id: the same Dockerfile and copied files build the
  // same image (each step's image is kept: sandbox/docker/repo-build.ts), whose kept environment a later run reuses.
  const lookup = image === null && store ? await sandboxes.builtImage() : image;
  const found = store && lookup !== null ? await store.find(key, lookup) : null;
  if (store && found) return reuseKept(store, found, options, base, dir);
  await mkdir(dir);
  await cp(join(checkoutDir, ".git"), join(dir, ".git"), { recursive: true, verbatimSymlinks: true });
  const sandbox = await sandboxes.start(checkoutDir, options.setup.network, store ? user : undefined);
  try {
    const { fallbacks } = await runSetup(sandbox, {
      commands: options.setup.commands,
      detected: options.setup.detected,
      secrets: options.secrets,
      networkWasOn: options.setup.network,
      timeoutMs: options.setup.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // Root's files become the sandbox user's, as the workspace itself is (its owner is the reference).
    if (user === "root") await sandbox.exec("chown -R --reference=. -- .", { timeoutMs: 600_000 });
    await extractArchive(
      await sandbox.exportWorkspace(),
      dir,
      workspaceLimits(options.intake ?? DEFAULT_INTAKE_LIMITS),
    );
    await refuseSecrets(dir, options.secrets);
    const tree = await treeOfDirectory(base, dir);
    const noted = fallbacks.length ? { fallbacks } : {};
    if (!store) return { dir, base, tree, ...noted };
    const kept = await keepEnvironment({
      store,
      sandbox,
      key,
      repository: repository?.fullName ?? "",
      dir,
      tree,
      base,
      secrets: options.secrets,
    });
    sandboxes.useImage(kept.image);
    return { dir, base, tree, ...noted };
  } finally {
    // Awaited: nothing setup started may still run when the agent's sandbox starts.
    await sandboxes.dispose(sandbox);
  }
}

/**
 * A warm start's prepared tree. Usually every file setup produced lies under a directory the host's tree
 * skips (node_modules, .venv…) and lives in the kept image alone, which lays it in each sandbox itself:
 * the new checkout as it is, with the base commit's tree, is the prepared tree. Otherwise the few kept
 * files the host needs go under `dir` first and the checkout over them.
 */
async function reuseKept(
  store: PreparedEnvironments,
  found: KeptEnvironment,
  options: PrepareOptions,
  base: BaseCommit,
  dir: string,
): Promise<PreparedTree> {
  const steps = stepTimer();
  const checkoutDir = options.trusted.dir;
  const hostFiles = await store.workspace(found);
  if (hostFiles) {
    await layKeptWorkspace(
      hostFiles,
      checkoutDir,
      options.root,
      dir,
      workspaceLimits(options.intake ?? DEFAULT_INTAKE_LIMITS),
    );
  }
  steps.lap("lay_workspace");
  // The kept files were scanned when kept, for these very secrets (they are part of the key): only the
  // new checkout's files are new here.
  await refuseSecrets(checkoutDir, options.secrets);
  steps.lap("secret_scan");
  options.sandboxes.useImage(found.image);
  const tree = hostFiles ? await treeOfDirectory(base, dir) : base.tree;
  steps.lap("tree");
  return { dir: hostFiles ? dir : checkoutDir, base, tree, reused: found, steps: steps.laps };
}

/**
 * A review run's prepared tree: the files setup produced on the trusted tree (those it does not track:
 * node_modules, .venv, a built runner) with the pull request branch's checkout over them, its own `.git`
 * and base commit. Sandboxes of a kept image lay the kept files themselves and this tree over them. A
 * dependency the branch added is not installed: the agent has no network to install it either.
 */
async function layBranch(
  environment: PreparedTree,
  branch: { dir: string; headSha: string },
  options: PrepareOptions,
): Promise<PreparedTree> {
  const gitDir = join(branch.dir, ".git");
  // Its own scratch: the trusted base's artefact excludes file stays as it was.
  const scratch = join(options.root, "scratch", "branch");
  await mkdir(scratch, { recursive: true });
  const base = await loadBaseCommit(gitDir, branch.headSha, scratch);
  await excludeArtefacts(gitDir, base);
  await refuseSecrets(branch.dir, options.secrets);
  const carried = {
    ...(environment.reused ? { reused: environment.reused } : {}),
    ...(environment.steps ? { steps: environment.steps } : {}),
  };
  // No setup, or a warm start whose kept files all live in the image: nothing setup produced is on the host.
  if (environment.dir === options.trusted.dir) return { dir: branch.dir, base, tree: base.tree, ...carried };
  // Only what setup produced moves over (out of this run's own copy, never following a symlink setup
  // left): the default branch's files, as setup left them, are not the branch's.
  const dir = join(options.root, "review");
  await mkdir(dir);
  for (const path of await producedFiles(environment.dir, environment.base)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await rename(join(environment.dir, path), join(dir, path));
  }
  await layCheckoutOver(branch.dir, dir);
  return { dir, base, tree: await treeOfDirectory(base, dir), ...carried };
}

function rootNeedsKeeping(): AgentFixError {
  return new AgentFixError("`setup.user: root` needs a worker that keeps the environment setup prepares", {
    code: "setup_failed",
    fault: "config",
    hint: "Run the worker with Docker sandboxes and kept environments (`worker.keptEnvironments.size` of the operator's YAML not 0), or remove `setup.user: root` from .github/agent-fix.yml.",
  });
}

/**
 * The artefact rules in the repository's `info/exclude`, which every sandbox's copy of `.git` carries:
 * what setup installed (a virtual environment, downloaded modules) stays out of the agent's
 * `git status` and of its submission's diff, as it stays out of the change the host computes.
 */
async function excludeArtefacts(gitDir: string, base: BaseCommit): Promise<void> {
  if (base.rules.length === 0) return;
  await mkdir(join(gitDir, "info"), { recursive: true });
  const rules = base.rules.map((rule) => rule.pattern).join("\n");
  await appendFile(
    join(gitDir, "info", "exclude"),
    `\n# agent-fix: what running code leaves behind\n${rules}\n`,
  );
}

/** Fails the run before the agent when setup wrote a secret's value into the workspace. */
async function refuseSecrets(dir: string, secrets: Record<string, string>): Promise<void> {
  const hits = await findSecrets(dir, secrets);
  if (hits.length === 0) return;
  const where = [...new Set(hits.map((hit) => `${hit.file} (${hit.name})`))].join(", ");
  throw new AgentFixError(`Setup wrote the value of a setup secret into the repository's files: ${where}`, {
    code: "secret_in_workspace",
    fault: "repository",
    hint:
      "The agent would have read it, so the run stopped before the agent started. Make the setup commands " +
      "write credentials outside the repository (e.g. ~/.npmrc or an environment variable): $HOME and /tmp " +
      "of setup are discarded with its sandbox.",
  });
}

function stepTimer(): { laps: Record<string, number>; lap: (step: string) => void } {
  const laps: Record<string, number> = {};
  let mark = performance.now();
  return {
    laps,
    lap: (step) => {
      const now = performance.now();
      laps[step] = Math.round(now - mark);
      mark = now;
    },
  };
}
