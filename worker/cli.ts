#!/usr/bin/env node
/**
 * `agent-fix`: run the agent on a local repository with no GitHub involved, evaluate it on SWE-bench-style
 * instances (`eval`, `eval-replays`, worker/eval/), mine such instances from a repository's history
 * (`mine`), read a trajectory, or replay
 * one against a repository. A composition root: it builds the concrete sandbox provider, model and ACI.
 * Exit codes: 0 success, 1 the run did not produce an accepted patch (or replay found differences),
 * 2 an error in the arguments or the configuration.
 */
import { realpathSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { createSandboxProvider } from "../sandbox/index.js";
import type { Gate, Sandbox, SandboxProvider } from "../src/contracts.js";
import { AgentFixError, ConfigError } from "../src/errors.js";
import { abortOnInterrupt } from "../src/process-signals.js";
import { createEnvironment } from "./aci/index.js";
import { readIssue, resolveRepo, runId } from "./agent/cli-support.js";
import { type AgentFixConfig, loadConfig } from "./agent/config-file.js";
import { runAgent } from "./agent/index.js";
import { formatTrajectory, readTrajectory } from "./agent/inspect.js";
import { formatReplayReport, replayActions } from "./agent/replay-check.js";
import { runEval } from "./eval/eval.js";
import { runMine } from "./eval/mine/mine.js";
import { exportReplays } from "./eval/replays.js";
import { createModel } from "./model/index.js";

const GATE_TIMEOUT_MS = 15 * 60_000;
const print = (line: string) => process.stdout.write(`${line}\n`);

interface RunOptions {
  repo: string;
  issue: string;
  model?: string;
  sandbox: "docker" | "local";
  config?: string;
  test?: string;
  out: string;
}

async function startSandbox(
  driver: "docker" | "local",
  sourceDir: string,
  jobId: string,
  config: AgentFixConfig,
) {
  const provider = createSandboxProvider(driver);
  const sandbox = await provider.create({ sourceDir, jobId });
  try {
    const environment = await createEnvironment({ sandbox, config: config.aci });
    return { sandbox, environment };
  } catch (error) {
    await sandbox.dispose();
    throw error;
  }
}

function commandGate(sandbox: Sandbox, command: string): Gate {
  return async (_patch, signal) => {
    const result = await sandbox.exec(command, {
      cwd: sandbox.workdir,
      timeoutMs: GATE_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    const verdict = result.timedOut ? "timed out" : `exit code ${result.exitCode}`;
    return {
      passed: result.exitCode === 0 && !result.timedOut,
      output: `$ ${command}\n${result.output}\n(${verdict})`,
    };
  };
}

async function run(options: RunOptions): Promise<number> {
  const config = await loadConfig({ files: options.config ? [options.config] : [] });
  const issue = await readIssue(options.issue);
  const model = await createModel(options.model, {
    config: config.model,
    onRetry: (event) => print(`  model API failed (${event.reason}); retry ${event.attempt}`),
  });
  const repo = await resolveRepo(options.repo);
  const id = runId(repo.name);
  const out = resolve(options.out);
  await mkdir(out, { recursive: true });
  const controller = new AbortController();
  const detach = abortOnInterrupt(controller, print);
  let sandbox: Sandbox | undefined;
  try {
    const started = await startSandbox(options.sandbox, repo.dir, id, config);
    sandbox = started.sandbox;
    const trajectoryPath = join(out, `${id}.traj`);
    print(`agent-fix run ${id}: ${model.name}, ${options.sandbox} sandbox, trajectory ${trajectoryPath}`);
    const trajectory = await runAgent({
      model,
      environment: started.environment,
      config: config.agent,
      issue,
      repoName: repo.name,
      signal: controller.signal,
      trajectoryPath,
      sandboxImage: sandbox.image,
      configHash: config.hash,
      info: { workdir: sandbox.workdir },
      ...(options.test ? { gate: commandGate(sandbox, options.test), testCommand: options.test } : {}),
      onStep: ({ step, maxSteps, entry, info }) => {
        const action = (entry.action.split("\n")[0] || "(format error)").slice(0, 70);
        const stats = info.model_stats;
        print(
          `step ${String(step).padStart(2)}/${maxSteps}  ${action.padEnd(70)}  tokens ${entry.tokens.sent}/${entry.tokens.received}  $${stats.instance_cost.toFixed(4)}`,
        );
      },
    });
    const { info } = trajectory;
    const patch = info.submission ?? "";
    const patchPath = join(out, `${id}.patch`);
    await writeFile(patchPath, patch, "utf8");
    const gate = info.gate.at(-1);
    const accepted =
      info.exit_status === "submitted" && patch.trim() !== "" && (!options.test || gate?.passed === true);
    print(`exit status: ${info.exit_status}${typeof info.error === "string" ? ` (${info.error})` : ""}`);
    if (gate)
      print(`tests (--test): ${gate.passed ? "passed" : "failed"} after ${info.gate.length} attempt(s)`);
    print(`patch: ${patch.trim() ? patchPath : "(empty)"}`);
    print(
      `cost: $${info.model_stats.instance_cost.toFixed(4)} over ${info.model_stats.api_calls} API calls${typeof info.cost_note === "string" ? ` (${info.cost_note})` : ""}`,
    );
    return accepted ? 0 : 1;
  } finally {
    detach();
    await sandbox?.dispose();
    await repo.cleanup();
  }
}

async function inspect(file: string, options: { full?: boolean }): Promise<number> {
  const trajectory = await readTrajectory(file);
  print(formatTrajectory(trajectory, { maxObservationLines: options.full ? 0 : 30 }));
  return 0;
}

async function replay(file: string, options: { repo: string; sandbox: "docker" | "local"; config?: string }) {
  const trajectory = await readTrajectory(file);
  const bundle = trajectory.info.tool_bundle;
  const config = await loadConfig({
    files: options.config ? [options.config] : [],
    ...(bundle === "aci" || bundle === "editor" ? { overrides: { aci: { bundle } } } : {}),
  });
  const repo = await resolveRepo(options.repo);
  const { sandbox, environment } = await startSandbox(options.sandbox, repo.dir, runId(repo.name), config);
  try {
    const recordedWorkdir = typeof trajectory.info.workdir === "string" ? trajectory.info.workdir : undefined;
    const report = await replayActions(trajectory, environment, {
      ...(recordedWorkdir ? { recordedWorkdir } : {}),
      workdir: sandbox.workdir,
    });
    print(formatReplayReport(report));
    return report.differences.length === 0 ? 0 : 1;
  } finally {
    await sandbox.dispose();
    await repo.cleanup();
  }
}

interface EvalCliOptions {
  model: string;
  variant: string[];
  config?: string;
  workers: number;
  out: string;
}

async function evaluate(instances: string, options: EvalCliOptions): Promise<number> {
  const providers = new Map<string, SandboxProvider>();
  const providerFor = (image: string | undefined) => {
    const key = image ?? "";
    let provider = providers.get(key);
    if (!provider) {
      provider = createSandboxProvider("docker", image ? { image } : {});
      providers.set(key, provider);
    }
    return provider;
  };
  const controller = new AbortController();
  const detach = abortOnInterrupt(controller, print);
  try {
    return await runEval({
      instances,
      model: options.model,
      variants: options.variant,
      config: options.config,
      workers: options.workers,
      out: options.out,
      providerFor,
      print,
      signal: controller.signal,
    });
  } finally {
    detach();
  }
}

async function evalReplays(runDir: string, options: { out: string; variant: string }): Promise<number> {
  const summary = await exportReplays({ runDir, out: options.out, variant: options.variant });
  print(`replays of ${summary.written.length} instance(s) written to ${resolve(options.out)}`);
  if (summary.skipped.length)
    print(`no replay (the run failed with an error): ${summary.skipped.join(", ")}`);
  return 0;
}

interface MineCliOptions {
  since?: string;
  limit: number;
  out?: string;
  setup: string[];
  image?: string;
}

async function mine(slug: string, options: MineCliOptions): Promise<number> {
  const [owner, repo, ...rest] = slug.split("/");
  if (!owner || !repo || rest.length > 0) {
    throw new ConfigError(`${slug}: expected OWNER/REPO`, { code: "mine_options_invalid" });
  }
  const since = options.since === undefined ? undefined : new Date(options.since);
  if (since && Number.isNaN(since.getTime())) {
    throw new ConfigError(`--since ${options.since}: not a date`, {
      code: "mine_options_invalid",
      hint: "Give a date as 2025-01-31 (or an ISO 8601 time).",
    });
  }
  const controller = new AbortController();
  const detach = abortOnInterrupt(controller, print);
  try {
    await runMine({
      owner,
      repo,
      since,
      limit: options.limit,
      out: resolve(options.out ?? `${owner}__${repo}.jsonl`),
      ...(options.setup.length ? { setup: options.setup } : {}),
      provider: createSandboxProvider("docker", options.image ? { image: options.image } : {}),
      print,
      signal: controller.signal,
    });
    return 0;
  } finally {
    detach();
  }
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new InvalidArgumentError("expected a whole number of at least 1");
  }
  return number;
}

export function buildProgram(setExitCode: (code: number) => void): Command {
  const sandboxOption = () =>
    new Option("--sandbox <driver>", "where commands run: docker (isolated) or local (no isolation)")
      .choices(["docker", "local"])
      .default("docker");
  const program = new Command()
    .name("agent-fix")
    .description("Resolve an issue in a repository with an LLM agent, without GitHub.")
    .exitOverride()
    .showHelpAfterError();
  program
    .command("run")
    .description("run one episode of the agent on a repository")
    .requiredOption("--repo <dir|git-url>", "the repository: a directory, or a git URL to clone")
    .requiredOption("--issue <file|text>", "the issue: a file (first line = title) or the text itself")
    .option("--model <spec>", "openai:NAME or replay:FILE (default: model.name in the config)")
    .addOption(sandboxOption())
    .option("--config <file>", "a YAML file overriding config/default.yaml")
    .option("--test <command>", "a command that must pass on the submitted change (the gate)")
    .option("--out <dir>", "where ID.traj and ID.patch are written", "./trajectories")
    .action(async (options: RunOptions) => setExitCode(await run(options)));
  program
    .command("inspect")
    .description("show a trajectory: each step's thought, action and observation, then the outcome")
    .argument("<file>", "a .traj file")
    .option("--full", "show observations whole")
    .action(async (file: string, options: { full?: boolean }) => setExitCode(await inspect(file, options)));
  program
    .command("replay")
    .description("re-run a trajectory's actions on a repository and report where the observations differ")
    .argument("<file>", "a .traj file")
    .requiredOption("--repo <dir|git-url>", "the repository to replay against")
    .addOption(sandboxOption())
    .option("--config <file>", "a YAML file overriding config/default.yaml")
    .action(async (file: string, options: { repo: string; sandbox: "docker" | "local"; config?: string }) =>
      setExitCode(await replay(file, options)),
    );
  program
    .command("eval")
    .description("run the agent on SWE-bench-style instances and grade each one as SWE-bench's harness does")
    .argument(
      "<instances>",
      "JSON Lines: SWE-bench's fields, optionally setup, test_command ('... {tests}'), image",
    )
    .requiredOption(
      "--model <spec>",
      "openai:NAME, or replay:DIR holding INSTANCE_ID.jsonl for each instance",
    )
    .option(
      "--variant <name=file>",
      "also run with this YAML laid over the config (repeatable); 'default' always runs",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--config <file>", "a YAML file overriding config/default.yaml, under every variant")
    .option("--workers <n>", "instances run at once", positiveInteger, 1)
    .requiredOption(
      "--out <dir>",
      "results.json, predictions.jsonl, report.md and trajectories; resumed if present",
    )
    .action(async (instances: string, options: EvalCliOptions) =>
      setExitCode(await evaluate(instances, options)),
    );
  program
    .command("mine")
    .description("build eval instances from a repository's merged pull requests that fix an issue with tests")
    .argument("<owner/repo>", "the repository, on github.com or GHE_HOST; the token from GITHUB_TOKEN")
    .option("--since <date>", "only pull requests merged since this date")
    .option("--limit <n>", "instances to build at most, the most recently merged first", positiveInteger, 20)
    .option("--out <file>", "the instances, as JSON Lines (default OWNER__REPO.jsonl)")
    .option(
      "--setup <command>",
      "a setup command instead of the detected ones (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--image <image>", "the Docker image the tests run in (default the agent-fix sandbox image)")
    .action(async (slug: string, options: MineCliOptions) => setExitCode(await mine(slug, options)));
  program
    .command("eval-replays")
    .description("turn a finished eval's trajectories into a replay directory, to re-run it at no cost")
    .argument("<run-dir>", "the --out directory of a finished agent-fix eval")
    .requiredOption("--out <dir>", "where INSTANCE_ID.jsonl is written, for --model replay:DIR")
    .option("--variant <name>", "the variant whose runs are exported", "default")
    .action(async (runDir: string, options: { out: string; variant: string }) =>
      setExitCode(await evalReplays(runDir, options)),
    );
  return program;
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  try {
    await buildProgram((value) => {
      code = value;
    }).parseAsync(argv);
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.exitCode === 0
        ? 0
        : 2;
    }
    if (error instanceof AgentFixError) {
      process.stderr.write(`agent-fix: ${error.describe()}\n`);
      return error.fault === "config" || error.fault === "user" ? 2 : 1;
    }
    process.stderr.write(
      `agent-fix: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}

// Run when executed (tsx worker/cli.ts, or the installed bin, a symlink), not when imported by tests.
const isEntry =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (isEntry) process.exitCode = await main(process.argv);
