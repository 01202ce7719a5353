/**
 * The prepared tree (step 5 of docs/architecture.md): the worker's own checkout with the files setup left
 * behind. Setup runs in a sandbox of its own (network and secrets as configured); its workspace files,
 * never its `.git`, are unpacked over a copy of the trusted `.git`, then that sandbox is removed with every
 * process it started, its /tmp and its $HOME. The baseline, the agent and every gate start fresh sandboxes
 * from this tree.
 */
import { appendFile, cp, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { AgentFixError } from "../../src/errors.js";
import type { RunSandboxes } from "./sandbox.js";
import { findSecrets } from "./secret-scan.js";
import { runSetup } from "./setup.js";
import { extractArchive } from "./workspace-archive.js";
import { type BaseCommit, loadBaseCommit, treeOfDirectory } from "./workspace-tree.js";

export interface PreparedTree {
  /** Host directory: the trusted `.git` and the files sandboxes start from. */
  dir: string;
  base: BaseCommit;
  /** The tree of the paths that count in `dir` (the base commit's tree when there was no setup). */
  tree: string;
}

interface PrepareOptions {
  sandboxes: RunSandboxes;
  /** The worker's checkout (credentials stripped). */
  checkoutDir: string;
  headSha: string;
  /** A directory of this run for the prepared copy and temporary files. */
  root: string;
  setup: { commands: readonly string[]; network: boolean; timeoutMs: number };
  secrets: Record<string, string>;
  signal?: AbortSignal;
}

export async function prepareTree(options: PrepareOptions): Promise<PreparedTree> {
  const scratch = join(options.root, "scratch");
  await mkdir(scratch, { recursive: true });
  const base = await loadBaseCommit(join(options.checkoutDir, ".git"), options.headSha, scratch);
  await excludeArtefacts(join(options.checkoutDir, ".git"), base);
  if (options.setup.commands.length === 0) return { dir: options.checkoutDir, base, tree: base.tree };

  const dir = join(options.root, "prepared");
  await mkdir(dir);
  await cp(join(options.checkoutDir, ".git"), join(dir, ".git"), { recursive: true, verbatimSymlinks: true });
  const sandbox = await options.sandboxes.start(options.checkoutDir, options.setup.network);
  try {
    await runSetup(sandbox, {
      commands: options.setup.commands,
      secrets: options.secrets,
      networkWasOn: options.setup.network,
      timeoutMs: options.setup.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    await extractArchive(await sandbox.exportWorkspace(), dir);
  } finally {
    // Awaited: nothing setup started may still run when the agent's sandbox starts.
    await options.sandboxes.dispose(sandbox);
  }
  await refuseSecrets(dir, options.secrets);
  return { dir, base, tree: await treeOfDirectory(base, dir) };
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
