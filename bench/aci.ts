/**
 * Benchmark of the ACI (npm run bench:aci [-- --driver=docker|local]), ending with one JSON line.
 *
 * - search_ratio: `search_dir` for a common identifier over a tree of >= 20,000 files (copies of this
 *   repository's node_modules) divided by plain `rg -c` for the same term in the same sandbox, same
 *   run. Also for a rare term, where the cap does not cut the search short. Goal: at most 1.3.
 * - edit_ms: median time of an accepted `edit` on a 5,000-line TypeScript file, lint included, and the
 *   sandbox round trip (readFile + writeFile of that file) measured alongside. Goal: < 50 ms on top.
 * - obs_tokens: median tokens of the observations of a scripted 20-step session through the ACI and
 *   of the same session through plain bash (cat, grep -rn, sed). Tokens are estimated as characters / 4.
 */

import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import Docker from "dockerode";
import { DockerSandboxProvider } from "../sandbox/docker/provider.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import { SANDBOX_IMAGE } from "../sandbox/version.js";
import type { Environment, Sandbox, SandboxProvider } from "../src/shared/contracts.js";
import { createEnvironment } from "../worker/aci/index.js";
import { aciConfigSchema } from "../worker/config/aci.js";
import { gitInit, obsSession } from "./aci-session.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const temps: string[] = [];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

async function pickProvider(): Promise<{ name: string; provider: SandboxProvider }> {
  const requested = process.argv.find((arg) => arg.startsWith("--driver="))?.slice("--driver=".length);
  if (requested !== "local") {
    try {
      await new Docker().getImage(SANDBOX_IMAGE).inspect();
      return { name: "docker", provider: new DockerSandboxProvider() };
    } catch (error) {
      if (requested === "docker") throw error;
      console.log(
        `Docker or the image ${SANDBOX_IMAGE} is not available (${(error as Error).message}); using the local driver.`,
      );
    }
  }
  return { name: "local", provider: new LocalSandboxProvider({ warn: () => undefined }) };
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Copies the files under 200 KB of node_modules `copies` times: a large tree of ordinary source files. */
function buildLargeTree(copies: number): { dir: string; files: number } {
  const dir = tempDir("aci-bench-tree-");
  let files = 0;
  const copy = (from: string, to: string) => {
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const source = path.join(from, entry.name);
      const target = path.join(to, entry.name);
      if (entry.isDirectory()) copy(source, target);
      else if (entry.isFile() && statSync(source).size < 200_000) {
        mkdirSync(to, { recursive: true });
        cpSync(source, target);
        files++;
      }
    }
  };
  for (let index = 0; index < copies; index++)
    copy(path.join(repoRoot, "node_modules"), path.join(dir, `vendor${index}`));
  return { dir, files };
}

async function start(
  provider: SandboxProvider,
  sourceDir: string,
): Promise<{ sandbox: Sandbox; env: Environment }> {
  const sandbox = await provider.create({
    sourceDir,
    jobId: `bench-aci-${process.pid}`,
    defaultTimeoutMs: 300_000,
  });
  const env = await createEnvironment({ sandbox, config: aciConfigSchema.parse({ toolTimeoutMs: 300_000 }) });
  return { sandbox, env };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const begin = performance.now();
  await run();
  return performance.now() - begin;
}

async function searchRatio(
  provider: SandboxProvider,
  term: string,
  runs: number,
  sandbox: Sandbox,
  env: Environment,
) {
  const aci: number[] = [];
  const rg: number[] = [];
  let summary = "";
  const plain = `rg -c --no-messages -F -e '${term}' .`;
  await env.execute("search_dir", { search_term: term });
  await sandbox.exec(plain, { cwd: sandbox.workdir });
  for (let run = 0; run < runs; run++) {
    aci.push(
      await timed(async () => {
        summary = (await env.execute("search_dir", { search_term: term })).observation.split("\n")[0]!;
      }),
    );
    rg.push(await timed(() => sandbox.exec(plain, { cwd: sandbox.workdir })));
  }
  void provider;
  return { aciMs: median(aci), rgMs: median(rg), ratio: median(aci) / median(rg), summary };
}

function bigTypeScript(lines: number): string {
  const out: string[] = [];
  for (let index = 0; out.length < lines; index++) {
    out.push(
      `export function compute${index}(value: number): number {`,
      `  const scaled = value * ${index % 7} + ${index};`,
      "  return scaled > 10 ? scaled : -scaled;",
      "}",
      "",
    );
  }
  return `${out.slice(0, lines).join("\n")}\n`;
}

function bigPython(lines: number): string {
  const out: string[] = [];
  for (let index = 0; out.length < lines; index++) {
    out.push(
      `def compute${index}(value):`,
      `    scaled = value * ${index % 7} + ${index}`,
      "    return scaled if scaled > 10 else -scaled",
      "",
      "",
    );
  }
  return `${out.slice(0, lines).join("\n")}\n`;
}

/** Accepted edits of line 1002 + 5k of a 5,000-line file (TypeScript, or Python: checked by the sandbox's python3). */
async function editBench(provider: SandboxProvider, runs: number, language: "ts" | "py" = "ts") {
  const dir = tempDir("aci-bench-edit-");
  mkdirSync(path.join(dir, "src"));
  const file = `src/big.${language}`;
  writeFileSync(path.join(dir, file), language === "ts" ? bigTypeScript(5000) : bigPython(5000));
  const { sandbox, env } = await start(provider, dir);
  try {
    await env.execute("open", { path: file });
    await sleep(1000);
    const edits: number[] = [];
    const roundTrips: number[] = [];
    for (let run = 0; run < runs; run++) {
      const line = 1002 + 5 * ((run * 97) % 800);
      let accepted = false;
      edits.push(
        await timed(async () => {
          const result = await env.execute("edit", {
            start_line: line,
            end_line: line,
            replacement_text:
              language === "ts"
                ? `  const scaled = value * ${run} + ${line};`
                : `    scaled = value * ${run} + ${line}`,
          });
          accepted = result.observation.includes("File updated:");
        }),
      );
      if (!accepted) throw new Error(`edit ${run} at line ${line} was not accepted`);
      roundTrips.push(
        await timed(async () => {
          const data = await sandbox.readFile(file);
          await sandbox.writeFile(file, data);
        }),
      );
    }
    // Each edit is paired with the round trip measured right after it, so load on the machine cancels out.
    const overheads = edits.map((edit, index) => edit - roundTrips[index]!);
    return { editMs: median(edits), roundTripMs: median(roundTrips), overheadMs: median(overheads) };
  } finally {
    await sandbox.dispose();
  }
}

async function main(): Promise<void> {
  const { name, provider } = await pickProvider();
  console.log(`driver: ${name}`);

  const tree = buildLargeTree(3);
  gitInit(tree.dir);
  console.log(`search tree: ${tree.files} files`);
  const big = await start(provider, tree.dir);
  let common: Awaited<ReturnType<typeof searchRatio>>;
  let rare: Awaited<ReturnType<typeof searchRatio>>;
  try {
    common = await searchRatio(provider, "function", 7, big.sandbox, big.env);
    rare = await searchRatio(provider, "parseAllDocuments", 7, big.sandbox, big.env);
  } finally {
    await big.sandbox.dispose();
  }
  console.log(`search_dir "function": ${round(common.aciMs)} ms (${common.summary})`);
  console.log(
    `rg -c "function":      ${round(common.rgMs)} ms   -> search_ratio ${round(common.ratio, 2)} (goal <= 1.3)`,
  );
  console.log(`search_dir "parseAllDocuments": ${round(rare.aciMs)} ms (${rare.summary})`);
  console.log(`rg -c "parseAllDocuments":      ${round(rare.rgMs)} ms   -> ratio ${round(rare.ratio, 2)}`);

  const edit = await editBench(provider, 15);
  console.log(
    `edit on a 5,000-line .ts file: median ${round(edit.editMs)} ms; sandbox round trip ${round(edit.roundTripMs)} ms; ` +
      `on top (median of per-edit differences): ${round(edit.overheadMs)} ms (goal < 50)`,
  );

  const python = await editBench(provider, 15, "py");
  console.log(
    `edit on a 5,000-line .py file (python3 in the sandbox): median ${round(python.editMs)} ms; ` +
      `on top of the round trip: ${round(python.overheadMs)} ms`,
  );

  const obs = await obsSession(
    path.join(repoRoot, "node_modules/yaml"),
    (dir) => start(provider, dir),
    tempDir,
  );
  console.log("tokens per step (ACI / bash):", obs.perStep.map(([aci, bash]) => `${aci}/${bash}`).join(" "));
  console.log(
    `observation tokens (chars/4) over ${obs.steps} steps: ACI median ${obs.aciMedian}, total ${obs.aciTotal}; ` +
      `plain bash median ${obs.bashMedian}, total ${obs.bashTotal}`,
  );

  console.log(
    JSON.stringify({
      bench: "aci",
      driver: name,
      search_files: tree.files,
      search_ratio: round(common.ratio, 2),
      search_ms: round(common.aciMs),
      rg_ms: round(common.rgMs),
      search_ratio_rare: round(rare.ratio, 2),
      edit_ms: round(edit.editMs),
      edit_roundtrip_ms: round(edit.roundTripMs),
      edit_overhead_ms: round(edit.overheadMs),
      edit_py_ms: round(python.editMs),
      edit_py_overhead_ms: round(python.overheadMs),
      edit_obs_tokens: obs.editTokens,
      obs_tokens: obs.aciMedian,
      obs_tokens_bash: obs.bashMedian,
      obs_tokens_total: obs.aciTotal,
      obs_tokens_bash_total: obs.bashTotal,
      tokenizer: "chars/4",
    }),
  );
}

try {
  await main();
} finally {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
}
