/**
 * Where the prompt tokens go (npm run bench:tokens [-- --session NAME] [--no-first-wave] [--out DIR]
 * [--config FILE]), ending with one JSON line. By default it replays the real bugs (sample-median on
 * request, or when none is recorded); --out keeps each replay's trajectory and patch; --config lays a
 * YAML file over config/default.yaml for today's replay, to measure other settings.
 *
 * Each recorded session (bench/token-sessions.ts) is replayed through today's agent: the real loop, its
 * prompts and history processor, the ACI in a real Docker sandbox, the gate running the session's test
 * command, and a `replay:` model that answers with the recorded replies and records every request. Per
 * call it prints the prompt's tokens by part (bench/prompt-split.ts): system prompt, tool definitions,
 * task, earlier actions and observations as the history processor kept them, and the newest
 * observation; per session the totals, estimated as worker/model/tokens.ts does (chars / 4) and
 * counted with gpt-4.1's tokenizer (o200k_base), the prefix reuse (bench/prefix-reuse.ts, the tools
 * first as the API sends them), and the prompts' dollars at the default model's prices with the
 * cacheable prefix billed as cached input.
 *
 * The baseline, measured in the same run: the same replies replayed through the first wave's agent
 * (bench/first-wave.ts: the code of session 1's last commit, its own loop, prompts, ACI and driver).
 * Arguments the first wave's tools did not have are dropped by its schemas, as they were then.
 *
 * A session counts as resolved when today's replay submits, the gate passes, and the patch is the one
 * the recording submitted (when it was kept).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  ChatMessage,
  FunctionSpec,
  Model,
  ModelResponse,
  Sandbox,
  Trajectory,
} from "../src/shared/contracts.js";
import { loadConfig } from "../worker/agent/config-file.js";
import { runAgent } from "../worker/agent/index.js";
import { startSandbox } from "../worker/cli/common.js";
import { commandGate } from "../worker/cli/run-command.js";
import { costOf, requirePrice } from "../worker/model/cost.js";
import { ReplayModel } from "../worker/model/replay.js";
import { type FirstWave, loadFirstWave } from "./first-wave.js";
import { prefixReuse, serialised, sharedPrefixes } from "./prefix-reuse.js";
import {
  addSplit,
  emptySplit,
  estimated,
  o200k,
  PROMPT_PARTS,
  type PromptSplit,
  splitPrompt,
  splitTotal,
  type TokenCounter,
} from "./prompt-split.js";
import { repoRoot, type TokenSession, tokenSessions } from "./token-sessions.js";

/** One request the agent sent: what the model was given. */
interface Request {
  messages: ChatMessage[];
  tools: FunctionSpec[];
}

/** A replay model that keeps a copy of every request, for the split to read afterwards. */
class RecordingModel implements Model {
  readonly requests: Request[] = [];
  readonly name: string;
  constructor(private readonly replay: Model) {
    this.name = replay.name;
  }
  /** Only a request the recording answers is kept: one past its last reply is no call the session made. */
  async query(messages: ChatMessage[], tools: FunctionSpec[], signal?: AbortSignal): Promise<ModelResponse> {
    const request = structuredClone({ messages, tools });
    const response = await this.replay.query(messages, tools, signal);
    this.requests.push(request);
    return response;
  }
}

/** What one replay of a session sent, and how it ended. */
interface Replayed {
  trajectory: Trajectory;
  requests: Request[];
  exit: string;
  gatePassed: boolean | null;
  patch: string;
}

/** Tokens of a replay by part, per call and summed, with both counters; and its prefix reuse. */
interface Measured {
  calls: { estimated: PromptSplit; o200k: PromptSplit }[];
  estimated: PromptSplit;
  o200k: PromptSplit;
  prefixReuse: number;
  /** chars/4 of each request's prefix shared with the request before it (tools included): what a prompt cache can serve. */
  cachedEstimated: number;
}

function measure(requests: Request[]): Measured {
  const split = (counter: TokenCounter) =>
    requests.map((request) => splitPrompt(request.messages, request.tools, counter));
  const estimates = split(estimated);
  const counts = split(o200k);
  // The tool definitions first, as the API puts them before the messages: they are part of the prefix.
  const texts = requests.map(
    (request) => `${JSON.stringify(request.tools)}\n${serialised(request.messages)}`,
  );
  const shared = sharedPrefixes(texts).reduce((sum, { shared }) => sum + shared, 0);
  return {
    calls: estimates.map((estimate, index) => ({ estimated: estimate, o200k: counts[index]! })),
    estimated: estimates.reduce(addSplit, emptySplit()),
    o200k: counts.reduce(addSplit, emptySplit()),
    prefixReuse: prefixReuse(texts),
    cachedEstimated: Math.ceil(shared / 4),
  };
}

function outcome(trajectory: Trajectory, requests: Request[]): Replayed {
  const { info } = trajectory;
  const gate = info.gate.at(-1);
  return {
    trajectory,
    requests,
    exit: String(info.exit_status),
    gatePassed: gate ? gate.passed : null,
    patch: info.submission ?? "",
  };
}

/** Today's replay, and the image its sandbox ran (the first wave's replay runs the same). */
async function replayToday(
  session: TokenSession,
  dir: string,
  configFile: string | undefined,
): Promise<{ today: Replayed; image: string }> {
  const config = await loadConfig({ files: configFile ? [configFile] : [] });
  const model = new RecordingModel(await ReplayModel.fromFile(session.replay));
  const { sandbox, environment } = await startSandbox(
    { driver: "docker", image: session.image, repoName: session.name },
    dir,
    `bench-tokens-${process.pid}`,
    config,
  );
  try {
    const trajectory = await runAgent({
      model,
      environment,
      config: config.agent,
      issue: session.issue,
      repoName: session.name,
      testCommand: session.testCommand,
      gate: commandGate(sandbox, session.testCommand),
    });
    return { today: outcome(trajectory, model.requests), image: sandbox.image };
  } finally {
    await sandbox.dispose();
  }
}

async function replayFirstWave(
  wave: FirstWave,
  session: TokenSession,
  dir: string,
  image: string,
): Promise<Replayed> {
  const config = await wave.loadConfig({});
  const model = new RecordingModel(await wave.replayModel(session.replay));
  let sandbox: Sandbox | undefined;
  try {
    // The first wave's /tmp was noexec, where `go test` and rustdoc build and run their binaries
    // (today's is exec): temporary files go under .git, which no diff shows, so the same actions run
    // the same tests.
    mkdirSync(path.join(dir, ".git", "tmp"));
    sandbox = await wave.createSandbox({
      sourceDir: dir,
      jobId: `bench-tokens-wave1-${process.pid}`,
      image,
      env: { TMPDIR: "/workspace/.git/tmp" },
    });
    const environment = await wave.createEnvironment({ sandbox, config: config.aci });
    const trajectory = await wave.runAgent({
      model,
      environment,
      config: config.agent,
      issue: session.issue,
      repoName: session.name,
      gate: commandGate(sandbox, session.testCommand),
    });
    return outcome(trajectory, model.requests);
  } finally {
    await sandbox?.dispose();
  }
}

const pad = (value: string | number, width: number) => String(value).padStart(width);
const header = ["call", ...PROMPT_PARTS, "total", "o200k"]
  .map((name, i) => pad(name, i === 0 ? 4 : 12))
  .join(" ");
const row = (label: string | number, split: PromptSplit, counted: PromptSplit) =>
  [
    pad(label, 4),
    ...PROMPT_PARTS.map((part) => pad(split[part], 12)),
    pad(splitTotal(split), 12),
    pad(splitTotal(counted), 12),
  ].join(" ");

/**
 * The prompts' dollars at the default model's prices (config/default.yaml), the cacheable prefix
 * billed as cached input: what a provider's prompt cache makes of the tokens and the prefix reuse.
 */
async function promptPricing(): Promise<{ model: string; dollars: (measured: Measured) => number }> {
  const { model } = await loadConfig();
  const name = model.name.replace(/^openai:/, "");
  const { price } = requirePrice(model.prices, name);
  return {
    model: name,
    dollars: (measured) =>
      costOf(
        {
          promptTokens: splitTotal(measured.estimated),
          cachedPromptTokens: measured.cachedEstimated,
          completionTokens: 0,
        },
        price,
      ),
  };
}

function printMeasured(title: string, measured: Measured): void {
  console.log(`  ${title} (tokens as chars/4 by part; the last column counted with o200k_base)`);
  console.log(`  ${header}`);
  for (const [index, call] of measured.calls.entries())
    console.log(`  ${row(index + 1, call.estimated, call.o200k)}`);
  console.log(`  ${row("all", measured.estimated, measured.o200k)}`);
  console.log(
    `  o200k by part: ${PROMPT_PARTS.map((part) => `${part} ${measured.o200k[part]}`).join(", ")}; ` +
      `prefix reuse ${measured.prefixReuse.toFixed(3)} (tools first), cacheable ${measured.cachedEstimated} of ${splitTotal(measured.estimated)}, uncached ${splitTotal(measured.estimated) - measured.cachedEstimated} (chars/4)`,
  );
}

/** A session is resolved when today's replay submits, the gate passes and the patch is the recorded one. */
function resolved(session: TokenSession, today: Replayed): { resolved: boolean; why: string } {
  if (today.exit !== "submitted") return { resolved: false, why: `exit ${today.exit}` };
  if (today.gatePassed !== true) return { resolved: false, why: "the gate did not pass" };
  if (session.patch !== undefined && session.patch !== today.patch)
    return { resolved: false, why: "the patch differs from the recorded one" };
  return {
    resolved: true,
    why: session.patch === undefined ? "submitted, gate passed" : "same patch, gate passed",
  };
}

interface BenchArguments {
  sessions: string[];
  firstWave: boolean;
  /** Where each replay's trajectory and patch are written, to read what a replay did. */
  out: string | undefined;
  /** A YAML file over config/default.yaml for today's replay (as `agent-fix run --config`), to try settings. */
  config: string | undefined;
}

function argumentsOf(argv: string[]): BenchArguments {
  const sessions: string[] = [];
  let firstWave = true;
  let out: string | undefined;
  let config: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--no-first-wave") firstWave = false;
    else if (arg === "--out" && argv[i + 1]) out = path.resolve(argv[++i]!);
    else if (arg === "--config" && argv[i + 1]) config = path.resolve(argv[++i]!);
    else if (arg === "--session" && argv[i + 1]) sessions.push(argv[++i]!);
    else if (arg.startsWith("--session=")) sessions.push(arg.slice("--session=".length));
    else
      throw new Error(
        `bench:tokens: unknown argument ${arg} (use --session NAME, repeated, --no-first-wave, --out DIR and --config FILE)`,
      );
  }
  return { sessions, firstWave, out, config };
}

/** Writes a replay's trajectory and patch under `out` as NAME.traj and NAME.patch. */
function keep(out: string | undefined, name: string, replayed: Replayed): void {
  if (!out) return;
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, `${name}.traj`), JSON.stringify(replayed.trajectory, null, 2));
  writeFileSync(path.join(out, `${name}.patch`), replayed.patch);
}

async function main(): Promise<void> {
  const options = argumentsOf(process.argv.slice(2));
  const { all, main } = await tokenSessions();
  const unknown = options.sessions.filter((name) => !all.some((session) => session.name === name));
  if (unknown.length > 0)
    throw new Error(
      `bench:tokens: no session ${unknown.join(", ")}; the sessions are ${all.map((s) => s.name).join(", ")}`,
    );
  const sessions = options.sessions.length ? all.filter((s) => options.sessions.includes(s.name)) : main;
  const wave = options.firstWave ? await loadFirstWave(repoRoot) : null;
  const pricing = await promptPricing();
  const dollars = { today: 0, wave: 0 };
  const results: Record<string, unknown>[] = [];
  const totals = {
    today: emptySplit(),
    todayO200k: emptySplit(),
    wave: emptySplit(),
    waveO200k: emptySplit(),
  };
  try {
    for (const session of sessions) {
      console.log(`\nsession ${session.name} (${session.replay})`);
      const checkout = () => session.checkout(mkdtempSync(path.join(os.tmpdir(), "bench-tokens-")));
      const todayDir = await checkout();
      let today: Replayed;
      let image: string;
      try {
        ({ today, image } = await replayToday(session, todayDir, options.config));
      } finally {
        rmSync(path.dirname(todayDir), { recursive: true, force: true });
      }
      keep(options.out, `${session.name}.today`, today);
      const now = measure(today.requests);
      const verdict = resolved(session, today);
      console.log(`  today: ${today.requests.length} calls, exit ${today.exit}, ${verdict.why}`);
      printMeasured("today", now);
      addSplit(totals.today, now.estimated);
      dollars.today += pricing.dollars(now);
      addSplit(totals.todayO200k, now.o200k);
      const result: Record<string, unknown> = {
        session: session.name,
        resolved: verdict.resolved,
        calls: today.requests.length,
        tokens: splitTotal(now.estimated),
        tokens_o200k: splitTotal(now.o200k),
        parts: now.estimated,
        prefix_reuse: Number(now.prefixReuse.toFixed(4)),
        uncached: splitTotal(now.estimated) - now.cachedEstimated,
        prompt_usd: Number(pricing.dollars(now).toFixed(4)),
      };
      if (wave) {
        const waveDir = await checkout();
        let first: Replayed;
        try {
          first = await replayFirstWave(wave, session, waveDir, image);
        } finally {
          rmSync(path.dirname(waveDir), { recursive: true, force: true });
        }
        keep(options.out, `${session.name}.first-wave`, first);
        const then = measure(first.requests);
        const sameAsToday = first.patch === today.patch;
        console.log(
          `  first wave (${wave.commit}): ${first.requests.length} calls, exit ${first.exit}, gate ${first.gatePassed}, ${sameAsToday ? "same patch" : "a different patch"}`,
        );
        printMeasured("first wave", then);
        addSplit(totals.wave, then.estimated);
        dollars.wave += pricing.dollars(then);
        addSplit(totals.waveO200k, then.o200k);
        const ratio = splitTotal(now.estimated) / splitTotal(then.estimated);
        const ratioO200k = splitTotal(now.o200k) / splitTotal(then.o200k);
        console.log(
          `  today / first wave: ${ratio.toFixed(3)} (chars/4), ${ratioO200k.toFixed(3)} (o200k); prefix reuse ${now.prefixReuse.toFixed(3)} vs ${then.prefixReuse.toFixed(3)}`,
        );
        Object.assign(result, {
          first_wave_calls: first.requests.length,
          first_wave_tokens: splitTotal(then.estimated),
          first_wave_tokens_o200k: splitTotal(then.o200k),
          first_wave_parts: then.estimated,
          first_wave_prefix_reuse: Number(then.prefixReuse.toFixed(4)),
          first_wave_uncached: splitTotal(then.estimated) - then.cachedEstimated,
          first_wave_prompt_usd: Number(pricing.dollars(then).toFixed(4)),
          first_wave_same_patch: sameAsToday,
          ratio: Number(ratio.toFixed(4)),
          ratio_o200k: Number(ratioO200k.toFixed(4)),
        });
      }
      results.push(result);
    }
  } finally {
    wave?.dispose();
  }
  const today = splitTotal(totals.today);
  console.log(`\nall sessions, today: ${today} tokens (chars/4), ${splitTotal(totals.todayO200k)} (o200k)`);
  console.log(`  by part: ${PROMPT_PARTS.map((part) => `${part} ${totals.today[part]}`).join(", ")}`);
  const summary: Record<string, unknown> = {
    bench: "tokens",
    tokenizer: ["chars/4", "o200k_base"],
    sessions: results,
    tokens: today,
    tokens_o200k: splitTotal(totals.todayO200k),
    prompt_usd: Number(dollars.today.toFixed(4)),
    resolved: results.filter((r) => r.resolved).length,
  };
  if (wave) {
    const then = splitTotal(totals.wave);
    console.log(
      `all sessions, first wave: ${then} tokens (chars/4), ${splitTotal(totals.waveO200k)} (o200k)`,
    );
    console.log(`  by part: ${PROMPT_PARTS.map((part) => `${part} ${totals.wave[part]}`).join(", ")}`);
    console.log(
      `today / first wave: ${(today / then).toFixed(3)} (chars/4), ${(splitTotal(totals.todayO200k) / splitTotal(totals.waveO200k)).toFixed(3)} (o200k); goal <= 0.7`,
    );
    console.log(
      `prompts at ${pricing.model}'s prices, the cacheable prefix as cached input: $${dollars.today.toFixed(4)} today, $${dollars.wave.toFixed(4)} first wave (${(dollars.today / dollars.wave).toFixed(3)})`,
    );
    Object.assign(summary, {
      first_wave_commit: wave.commit,
      first_wave_tokens: then,
      first_wave_tokens_o200k: splitTotal(totals.waveO200k),
      ratio: Number((today / then).toFixed(4)),
      ratio_o200k: Number((splitTotal(totals.todayO200k) / splitTotal(totals.waveO200k)).toFixed(4)),
      first_wave_prompt_usd: Number(dollars.wave.toFixed(4)),
    });
  }
  console.log(JSON.stringify(summary));
}

await main();
