/** `agent-fix run`: one episode of the agent on a local repository, gated by `--test` if given. */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { Gate, Sandbox, TrajectoryInfo } from "../../src/shared/contracts.js";
import { abortOnInterrupt } from "../../src/shared/process-signals.js";
import { readIssue, resolveRepo, runId } from "../agent/cli-support.js";
import { loadConfig } from "../agent/config-file.js";
import { type RunAgentOptions, runAgent } from "../agent/index.js";
import { createModel } from "../model/index.js";
import {
  imageOption,
  print,
  type SandboxDriver,
  type SetExitCode,
  sandboxOption,
  startSandbox,
} from "./common.js";

const GATE_TIMEOUT_MS = 15 * 60_000;

interface RunOptions {
  repo: string;
  issue: string;
  model?: string;
  sandbox: SandboxDriver;
  image?: string;
  config?: string;
  test?: string;
  out: string;
}

export function registerRunCommand(program: Command, setExitCode: SetExitCode): void {
  program
    .command("run")
    .description("run one episode of the agent on a repository")
    .requiredOption("--repo <dir|git-url>", "the repository: a directory, or a git URL to clone")
    .requiredOption("--issue <file|text>", "the issue: a file (first line = title) or the text itself")
    .option("--model <spec>", "openai:NAME or replay:FILE (default: model.name in the config)")
    .addOption(sandboxOption())
    .addOption(imageOption())
    .option("--config <file>", "a YAML file overriding config/default.yaml")
    .option("--test <command>", "a command that must pass on the submitted change (the gate)")
    .option("--out <dir>", "where ID.traj and ID.patch are written", "./trajectories")
    .action(async (options: RunOptions) => setExitCode(await run(options)));
}

/** The gate of `--test`: the command in the agent's own sandbox (bench:tokens replays through it too). */
export function commandGate(sandbox: Pick<Sandbox, "exec" | "workdir">, command: string): Gate {
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

const printStep: NonNullable<RunAgentOptions["onStep"]> = ({ step, maxSteps, entry, info }) => {
  const action = (entry.action.split("\n")[0] || "(format error)").slice(0, 70);
  const stats = info.model_stats;
  print(
    `step ${String(step).padStart(2)}/${maxSteps}  ${action.padEnd(70)}  tokens ${entry.tokens.sent}/${entry.tokens.received}  $${stats.instance_cost.toFixed(4)}`,
  );
};

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
    const started = await startSandbox(
      { driver: options.sandbox, image: options.image, repoName: repo.name },
      repo.dir,
      id,
      config,
    );
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
      sandboxOrigin: sandbox.origin,
      configHash: config.hash,
      info: { workdir: sandbox.workdir },
      ...(options.test ? { gate: commandGate(sandbox, options.test), testCommand: options.test } : {}),
      onStep: printStep,
    });
    return await report(trajectory.info, join(out, `${id}.patch`), options.test);
  } finally {
    detach();
    await sandbox?.dispose();
    await repo.cleanup();
  }
}

/** Writes the patch and prints the outcome; 0 when the patch was accepted (and passed `--test`). */
async function report(info: TrajectoryInfo, patchPath: string, test: string | undefined): Promise<number> {
  const patch = info.submission ?? "";
  await writeFile(patchPath, patch, "utf8");
  const gate = info.gate.at(-1);
  const accepted =
    info.exit_status === "submitted" && patch.trim() !== "" && (!test || gate?.passed === true);
  print(`exit status: ${info.exit_status}${typeof info.error === "string" ? ` (${info.error})` : ""}`);
  if (gate)
    print(`tests (--test): ${gate.passed ? "passed" : "failed"} after ${info.gate.length} attempt(s)`);
  print(`patch: ${patch.trim() ? patchPath : "(empty)"}`);
  print(
    `cost: $${info.model_stats.instance_cost.toFixed(4)} over ${info.model_stats.api_calls} API calls${typeof info.cost_note === "string" ? ` (${info.cost_note})` : ""}`,
  );
  return accepted ? 0 : 1;
}
