/**
 * The `agent-fix` CLI compiled once per test process, laid out as `npm run build` lays out dist/: the tests
 * that start it as a child process (tens of starts a file) start plain JavaScript. Started through tsx,
 * each start paid tsx's loader hooks on every module it loads (about 1.3 s of CPU of its 2.2 s); tsx
 * compiles with esbuild, and so does this, ahead of time, with the project's tsconfig.json.
 */
import { mkdtempSync } from "node:fs";
import { cp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("../../", import.meta.url));
/** What tsconfig.build.json compiles. */
const SOURCES = ["src", "worker", "sandbox"];

async function sourcesIn(dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

async function compile(out: string): Promise<void> {
  await build({
    entryPoints: (await Promise.all(SOURCES.map(sourcesIn))).flat(),
    outdir: out,
    outbase: root,
    format: "esm",
    platform: "node",
    target: "node20",
    tsconfig: join(root, "tsconfig.json"),
    logLevel: "error",
  });
  // What the compiled files find beside them, as dist/ finds it in the package: its package.json (ESM),
  // its dependencies, and config/default.yaml (worker/agent/config-file.ts looks two levels up for it).
  await cp(join(root, "package.json"), join(out, "package.json"));
  await symlink(join(root, "node_modules"), join(out, "node_modules"), "dir");
  await symlink(join(root, "config"), join(out, "config"), "dir");
}

/**
 * Kept on globalThis, not in this module: a vitest worker process runs many test files, each with its
 * own copy of the modules, and the sources do not change during a run.
 */
const KEY = Symbol.for("agent-fix.test.cli-build");
const shared = globalThis as { [KEY]?: { out: string; compiled: Promise<void> } };

const PREFIX = "af-cli-build-";

/**
 * Removes the builds of test processes that are gone. vitest ends its worker processes with a signal,
 * so no exit handler of theirs runs: each build is named after its process, and the next one sweeps.
 */
async function sweepBuildsOfEndedProcesses(): Promise<void> {
  for (const name of await readdir(tmpdir()).catch(() => [])) {
    const pid = Number(new RegExp(`^${PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!pid || pid === process.pid || isRunning(pid)) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user's, alive.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The compiled worker/cli.ts (dist/worker/cli.js's twin), built on the first call of this process. */
export async function cliScript(): Promise<string> {
  if (!shared[KEY]) {
    const out = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`));
    shared[KEY] = { out, compiled: sweepBuildsOfEndedProcesses().then(() => compile(out)) };
  }
  await shared[KEY].compiled;
  return join(shared[KEY].out, "worker/cli.js");
}
