/**
 * The product's sources (src/, worker/, sandbox/) as JavaScript, for the worker processes the e2e and
 * fault tests spawn (stack.ts spawnWorker): a process started through tsx spends about a second of CPU
 * more on its imports than the same modules built (1.9-2.2 s against 0.9-1.1 s measured on this machine),
 * and the suite starts such workers in every file that kills or restarts one.
 *
 * Built once per vitest run by its global setup (test/support/global-setup.ts), file by file with
 * esbuild (no bundling: the same modules, so a stack trace names the same files, and through the source
 * maps their .ts lines), into .test-build/ (gitignored). It sits one directory below the root as dist/
 * does, so paths the code resolves from its own location (worker/agent/config-file.ts's
 * config/default.yaml) hold. Only the files whose text changed since the last build are transformed
 * again, and outputs of deleted sources removed, so the build is never stale and a run that changed
 * nothing pays a few milliseconds of reading and hashing.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { build, version as esbuildVersion } from "esbuild";

const ROOT = join(import.meta.dirname, "..", "..");
/** Where the build goes: one level below the root, as dist/ (see above). */
export const BUILT_SOURCES_DIR = join(ROOT, ".test-build");
const SOURCE_DIRS = ["src", "worker", "sandbox"];

/**
 * Set by the global setup once the build is current: spawnWorker runs the built worker only then, so a
 * Stack outside vitest (the demo, the benches) or a run whose setup did not build keeps starting tsx.
 */
export const BUILT_SOURCES_ENV = "AGENT_FIX_TEST_BUILT_SOURCES";

interface Manifest {
  /** What the outputs were made with: a change of either rebuilds everything. */
  builder: string;
  /** Source path (from the root) -> hash of its text when its output was written. */
  files: Record<string, string>;
}

interface BuildFigures {
  sources: number;
  /** Files transformed this time (the rest were current). */
  built: number;
  removed: number;
  ms: number;
}

/** The worker's entry point in the build. */
export function builtEntry(source: string): string {
  return join(BUILT_SOURCES_DIR, source.replace(/\.ts$/, ".js"));
}

async function sourceFiles(root: string): Promise<string[]> {
  const lists = await Promise.all(
    SOURCE_DIRS.map(async (dir) =>
      (await readdir(join(root, dir), { recursive: true }))
        .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
        .map((file) => join(dir, file)),
    ),
  );
  return lists.flat().sort();
}

async function readManifest(file: string, builder: string): Promise<Manifest> {
  const empty = { builder, files: {} };
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (!text) return empty;
  const manifest = JSON.parse(text) as Manifest;
  return manifest.builder === builder ? manifest : empty;
}

/** Written beside its final name, then renamed: a run reading the build never sees half a file. */
async function writeAtomically(file: string, contents: string | Uint8Array): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  // Unique per write: two builds at once (two processes, or two calls of one) never share a partial file.
  const partial = `${file}.${process.pid}-${randomUUID()}.partial`;
  await writeFile(partial, contents);
  await rename(partial, file);
}

/** Brings .test-build/ up to date with the sources (of `root`: tests); returns what it did. */
export async function buildSources(root = ROOT): Promise<BuildFigures> {
  const started = performance.now();
  const outDir = join(root, ".test-build");
  const output = (source: string) => join(outDir, source.replace(/\.ts$/, ".js"));
  const manifestFile = join(outDir, "manifest.json");
  const tsconfig = await readFile(join(root, "tsconfig.json"), "utf8");
  const builder = createHash("sha256").update(`esbuild ${esbuildVersion}\n${tsconfig}`).digest("hex");
  const manifest = await readManifest(manifestFile, builder);
  const sources = await sourceFiles(root);
  const hashes = Object.fromEntries(
    await Promise.all(
      sources.map(async (file) => [
        file,
        createHash("sha256")
          .update(await readFile(join(root, file)))
          .digest("hex"),
      ]),
    ),
  ) as Record<string, string>;
  const changed = sources.filter(
    (file) => manifest.files[file] !== hashes[file] || !existsSync(output(file)),
  );
  const removed = Object.keys(manifest.files).filter((file) => !(file in hashes));

  if (changed.length > 0) {
    const result = await build({
      absWorkingDir: root,
      entryPoints: changed,
      outdir: outDir,
      outbase: ".",
      bundle: false,
      format: "esm",
      platform: "node",
      target: "node20",
      tsconfig: "tsconfig.json",
      sourcemap: "linked",
      // The .ts files are where the maps point: no need to carry their text.
      sourcesContent: false,
      write: false,
      logLevel: "silent",
    });
    await Promise.all(result.outputFiles.map((out) => writeAtomically(out.path, out.contents)));
  }
  await Promise.all(
    removed.flatMap((file) => [
      rm(output(file), { force: true }),
      rm(`${output(file)}.map`, { force: true }),
    ]),
  );
  if (changed.length > 0 || removed.length > 0)
    await writeAtomically(manifestFile, JSON.stringify({ builder, files: hashes } satisfies Manifest));
  return {
    sources: sources.length,
    built: changed.length,
    removed: removed.length,
    ms: Math.round(performance.now() - started),
  };
}

const BUILT_KEY = Symbol.for("agent-fix.test.built-sources");
const shared = globalThis as { [BUILT_KEY]?: Promise<BuildFigures> };

/**
 * The `agent-fix` CLI for the tests that start it as a child process (tens of starts a file): the built
 * worker/cli.ts, not through tsx, whose loader hooks cost about 1.3 s of CPU of each 2.2 s start. A test
 * process outside a run whose global setup built the sources (an integration file alone) brings the
 * build up to date itself: only what changed, each file written atomically, so processes doing it at
 * once agree.
 */
export async function cliScript(): Promise<string> {
  if (!process.env[BUILT_SOURCES_ENV]) {
    // Once per process (kept on globalThis: each test file has its own copy of this module), however
    // many tests start the CLI at once.
    shared[BUILT_KEY] ??= buildSources();
    await shared[BUILT_KEY];
  }
  return builtEntry("worker/cli.ts");
}
