/**
 * `agent-fix eval`: every instance under every variant, N at once, each through the app's steps in
 * sandboxes of its own, graded in a fresh one. Results are written as each one finishes; a second
 * invocation with the same --out skips what finished (a run that failed with an error is run again).
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import Bottleneck from "bottleneck";
import type { SandboxProvider } from "../../src/shared/contracts.js";
import { AgentFixError, ConfigError } from "../../src/shared/errors.js";
import type { RepositoryPolicy } from "../config/repo-policy.js";
import { requirePrice } from "../model/cost.js";
import { createModel } from "../model/index.js";
import { createAgentRunner } from "../run/solve/agent-runner.js";
import { type EvalInstance, readInstances } from "./instances.js";
import { renderReport } from "./report.js";
import { type InstanceResult, readResults, resultKey, writePredictions, writeResults } from "./results.js";
import { runInstance } from "./run-instance.js";
import { loadVariants, type Variant } from "./variants.js";

interface EvalOptions {
  instances: string;
  /** `openai:NAME`, or `replay:DIR` for DIR/INSTANCE_ID.jsonl per instance. */
  model: string;
  variants: string[];
  /** A YAML file laid over config/default.yaml for every variant (prices, endpoint, limits). */
  config?: string | undefined;
  workers: number;
  out: string;
  /** Sandboxes from the instance's image, or the agent-fix sandbox image. */
  providerFor: (image: string | undefined) => SandboxProvider;
  /**
   * For an instance that names no image: the one its checkout calls for, chosen as the worker chooses
   * (under the variant's `repository:` policy); undefined for the provider's default.
   */
  imageFor?: ((checkoutDir: string, policy: RepositoryPolicy) => Promise<string | undefined>) | undefined;
  print: (line: string) => void;
  signal: AbortSignal;
}

/** 0 when every instance finished (resolved or not), 1 when some failed with an error. */
export async function runEval(options: EvalOptions): Promise<number> {
  const instances = await readInstances(options.instances);
  const variants = await loadVariants(options.variants, options.config);
  await checkModel(options.model, variants);
  const out = resolve(options.out);
  await mkdir(out, { recursive: true });
  const results = new Map((await readResults(out)).map((result) => [resultKey(result), result]));
  const todo = variants.flatMap((variant) =>
    instances
      .filter((instance) => {
        const done = results.get(resultKey({ variant: variant.name, instance_id: instance.instance_id }));
        return !done || done.exit_status === "error";
      })
      .map((instance) => ({ variant, instance })),
  );
  const total = variants.length * instances.length;
  options.print(
    `agent-fix eval: ${instances.length} instance(s) x ${variants.length} variant(s), ${total - todo.length} already finished, ${todo.length} to run, ${options.workers} at once`,
  );
  let saving = Promise.resolve();
  let finished = 0;
  const limiter = new Bottleneck({ maxConcurrent: options.workers });
  await Promise.all(
    todo.map(({ variant, instance }) =>
      limiter.schedule(async () => {
        if (options.signal.aborted) return;
        const result = await evaluate(variant, instance, out, options);
        results.set(resultKey(result), result);
        finished++;
        options.print(`[${finished}/${todo.length}] ${progressLine(result)}`);
        saving = saving.then(() => writeResults(out, [...results.values()]));
        await saving;
      }),
    ),
  );
  options.signal.throwIfAborted();
  const all = [...results.values()];
  for (const variant of variants) await writePredictions(out, variant.name, all);
  const names = variants.map((variant) => variant.name);
  await writeFile(join(out, "report.md"), renderReport(options.model, names, instances.length, all), "utf8");
  options.print(`results: ${join(out, "results.json")}; report: ${join(out, "report.md")}`);
  return all.some((result) => result.exit_status === "error") ? 1 : 0;
}

async function evaluate(
  variant: Variant,
  instance: EvalInstance,
  out: string,
  options: EvalOptions,
): Promise<InstanceResult> {
  const started = Date.now();
  const jobId = `eval-${variant.name}-${instance.instance_id}`;
  const trajectoryDir = join(out, "trajectories", variant.name);
  const model = options.model.startsWith("replay:")
    ? `replay:${join(options.model.slice("replay:".length), `${instance.instance_id}.jsonl`)}`
    : options.model;
  const maxSteps = variant.config.agent.limits.maxSteps;
  const base = { instance_id: instance.instance_id, variant: variant.name, model: options.model };
  options.print(`start ${variant.name} ${instance.instance_id}`);
  try {
    const run = await runInstance(instance, {
      jobId,
      provider: options.providerFor(instance.image),
      ...(options.imageFor && instance.image === undefined
        ? { imageFor: (dir: string) => options.imageFor!(dir, variant.config.repository) }
        : {}),
      maxSteps,
      agentFor: (testCommand) =>
        createAgentRunner(
          { operator: variant.config, modelOverride: model, trajectoryDir },
          { maxSteps, testCommand },
          jobId,
        ),
      signal: options.signal,
    });
    const { info } = run.trajectory;
    return {
      ...base,
      resolved: run.grade.resolved,
      exit_status: info.exit_status ?? "unknown",
      steps: run.trajectory.trajectory.length,
      tokens: { sent: info.model_stats.tokens_sent, received: info.model_stats.tokens_received },
      cost_usd: info.model_stats.instance_cost,
      wall_time_s: (Date.now() - started) / 1000,
      patch: run.patch,
      baseline_passed: run.baselinePassed,
      no_pull_request_reason: run.noPullRequestReason,
      grade: run.grade,
      trajectory: join(trajectoryDir, `${jobId}.traj`),
      finished_at: new Date().toISOString(),
    };
  } catch (error) {
    if (options.signal.aborted) throw error;
    return {
      ...base,
      resolved: false,
      exit_status: "error",
      error: error instanceof AgentFixError ? error.describe() : String((error as Error).stack ?? error),
      steps: 0,
      tokens: { sent: 0, received: 0 },
      cost_usd: 0,
      wall_time_s: (Date.now() - started) / 1000,
      patch: "",
      baseline_passed: null,
      no_pull_request_reason: null,
      grade: null,
      trajectory: null,
      finished_at: new Date().toISOString(),
    };
  }
}

function progressLine(result: InstanceResult): string {
  const verdict =
    result.exit_status === "error"
      ? `error: ${result.error?.split("\n")[0] ?? ""}`
      : `${result.resolved ? "resolved" : "not resolved"} (${result.exit_status})`;
  return `${result.variant} ${result.instance_id}: ${verdict}, ${result.steps} steps, $${result.cost_usd.toFixed(4)}, ${result.wall_time_s.toFixed(1)} s`;
}

/**
 * Before any sandbox starts: an `openai:` model must have a price in every variant's config (a cost
 * limit needs one); `replay:DIR` must name a directory, each instance's turns being DIR/INSTANCE_ID.jsonl.
 */
async function checkModel(model: string, variants: readonly Variant[]): Promise<void> {
  if (model.startsWith("openai:")) {
    for (const variant of variants) {
      requirePrice(variant.config.model.prices, model.slice("openai:".length));
      // Builds the client, so a missing API key shows now rather than after each instance's setup.
      await createModel(model, { config: variant.config.model });
    }
    return;
  }
  if (!model.startsWith("replay:")) {
    throw new ConfigError(`--model ${model}: expected openai:NAME or replay:DIR`, {
      code: "eval_model_invalid",
    });
  }
  const dir = model.slice("replay:".length);
  const info = await stat(dir).catch(() => null);
  if (info?.isDirectory()) return;
  throw new ConfigError(`--model ${model}: ${dir} is not a directory`, {
    code: "eval_replay_dir_missing",
    hint: "With agent-fix eval, replay:DIR names a directory holding INSTANCE_ID.jsonl for each instance.",
  });
}
