/** `agent-fix eval` (SWE-bench-style instances, graded; worker/eval/) and `agent-fix eval-replays`. */
import { resolve } from "node:path";
import type { Command } from "commander";
import type { DockerSandboxProvider } from "../../sandbox/docker.js";
import { abortOnInterrupt } from "../../src/process-signals.js";
import type { RepositoryPolicy } from "../config/repo-policy.js";
import { runEval } from "../eval/eval.js";
import { exportReplays } from "../eval/replays.js";
import {
  checkoutImage,
  cliDockerSandboxes,
  collect,
  positiveInteger,
  print,
  type SetExitCode,
} from "./common.js";

interface EvalCliOptions {
  model: string;
  variant: string[];
  config?: string;
  workers: number;
  out: string;
}

export function registerEvalCommand(program: Command, setExitCode: SetExitCode): void {
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
      collect,
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
}

export function registerEvalReplaysCommand(program: Command, setExitCode: SetExitCode): void {
  program
    .command("eval-replays")
    .description("turn a finished eval's trajectories into a replay directory, to re-run it at no cost")
    .argument("<run-dir>", "the --out directory of a finished agent-fix eval")
    .requiredOption("--out <dir>", "where INSTANCE_ID.jsonl is written, for --model replay:DIR")
    .option("--variant <name>", "the variant whose runs are exported", "default")
    .action(async (runDir: string, options: { out: string; variant: string }) =>
      setExitCode(await evalReplays(runDir, options)),
    );
}

async function evaluate(instances: string, options: EvalCliOptions): Promise<number> {
  // One provider per image the instances name, made on first use.
  const providers = new Map<string, DockerSandboxProvider>();
  const providerFor = (image: string | undefined) => {
    const key = image ?? "";
    let provider = providers.get(key);
    if (!provider) {
      provider = cliDockerSandboxes(image ? { image } : {});
      providers.set(key, provider);
    }
    return provider;
  };
  const defaultProvider = providerFor(undefined);
  // An instance naming no image runs in the one its checkout calls for, as `agent-fix run` chooses it.
  const imageFor = (checkoutDir: string, policy: RepositoryPolicy) =>
    checkoutImage(defaultProvider, policy)(checkoutDir);
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
      imageFor,
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
