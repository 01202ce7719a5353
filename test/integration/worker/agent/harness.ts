/**
 * The loop over real parts for tests: the fixture repository copied into a local sandbox, the real ACI
 * over it, the config from config/default.yaml, and a replay model reading test/fixtures/agent/replays.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalSandboxProvider } from "../../../../sandbox/local.js";
import type { Environment, Gate, Model, Sandbox, Trajectory } from "../../../../src/shared/contracts.js";
import { createEnvironment } from "../../../../worker/aci/index.js";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { type RunAgentOptions, runAgent } from "../../../../worker/agent/index.js";
import type { AgentConfigInput } from "../../../../worker/config/agent.js";
import { ReplayModel } from "../../../../worker/model/replay.js";

export const fixtures = fileURLToPath(new URL("../../../fixtures/agent/", import.meta.url));
const calcRepo = join(fixtures, "calc-repo");
export const replay = (name: string) => join(fixtures, "replays", name);

const provider = new LocalSandboxProvider({ warn: () => {} });

interface Episode {
  trajectory: Trajectory;
  sandbox: Sandbox;
  environment: Environment;
  trajectoryPath: string;
  /** The trajectory as saved on disk. */
  saved: () => Promise<Trajectory>;
}

export async function startEnvironment(aci?: Record<string, unknown>) {
  const sandbox = await provider.create({ sourceDir: calcRepo, jobId: "agent-test" });
  const config = await loadConfig(aci ? { overrides: { aci } } : {});
  const environment = await createEnvironment({ sandbox, config: config.aci });
  return { sandbox, environment, config };
}

export async function runEpisode(options: {
  model: Model | string;
  agent?: AgentConfigInput | Record<string, unknown>;
  /** Overrides of the aci section, e.g. `{ bundle: "editor" }`. */
  aci?: Record<string, unknown>;
  gate?: (sandbox: Sandbox) => Gate;
  testCommand?: string;
  pullRequestTemplate?: RunAgentOptions["pullRequestTemplate"];
  signal?: AbortSignal;
  onStep?: (sandbox: Sandbox) => NonNullable<RunAgentOptions["onStep"]>;
  /** Told where the trajectory goes before the run starts (for runs that reject). */
  onPath?: (path: string) => void;
  cleanup: Sandbox[];
}): Promise<Episode> {
  const { sandbox, environment } = await startEnvironment(options.aci);
  options.cleanup.push(sandbox);
  const config = await loadConfig(options.agent ? { overrides: { agent: options.agent } } : {});
  const model =
    typeof options.model === "string" ? await ReplayModel.fromFile(replay(options.model)) : options.model;
  const trajectoryPath = join(await mkdtemp(join(tmpdir(), "agent-traj-")), "run.traj");
  options.onPath?.(trajectoryPath);
  const issue = (await readFile(join(fixtures, "issue.md"), "utf8")).split("\n");
  const run: RunAgentOptions = {
    model,
    environment,
    config: config.agent,
    issue: { title: issue[0]!, body: issue.slice(1).join("\n") },
    repoName: "acme/calc",
    trajectoryPath,
    sandboxImage: sandbox.image,
    configHash: config.hash,
  };
  if (options.gate) run.gate = options.gate(sandbox);
  if (options.testCommand) run.testCommand = options.testCommand;
  if (options.pullRequestTemplate) run.pullRequestTemplate = options.pullRequestTemplate;
  if (options.signal) run.signal = options.signal;
  if (options.onStep) run.onStep = options.onStep(sandbox);
  const trajectory = await runAgent(run);
  return {
    trajectory,
    sandbox,
    environment,
    trajectoryPath,
    saved: async () => JSON.parse(await readFile(trajectoryPath, "utf8")) as Trajectory,
  };
}

/** The repository's own tests as the gate, run in the sandbox. */
export const unittestGate =
  (sandbox: Sandbox): Gate =>
  async (_patch, signal) => {
    const result = await sandbox.exec("python3 -m unittest -q 2>&1", signal ? { signal } : {});
    return { passed: result.exitCode === 0, output: result.output };
  };
