/**
 * The agent a run gets: the loop of worker/agent over the ACI, with the operator's configuration and the
 * repository's model, limits and tool bundle applied.
 */
import { join } from "node:path";
import type { FixJobData } from "../../../src/shared/queue/index.js";
import { createEnvironment } from "../../aci/index.js";
import type { AgentFixConfig } from "../../agent/config-file.js";
import { type PullRequestTemplate, runAgent } from "../../agent/index.js";
import type { TrajectorySink } from "../../agent/trajectory.js";
import type { AciConfig } from "../../config/aci.js";
import type { AgentConfig } from "../../config/agent.js";
import type { Logger } from "../../log.js";
import { countModelRetry, meteredModel } from "../../metrics.js";
import { createModel } from "../../model/index.js";
import { observedModel } from "../../model/observed.js";
import type { RetryEvent } from "../../model/retry.js";
import type { LoadedRepoConfig, PipelineRepoConfig } from "../configure/repo-config.js";
import { checkModelChoice } from "../configure/repo-rules.js";
import type { AgentParts } from "../run-parts.js";
import type { AgentRunner } from "./agent-run-input.js";

/** The operator's configuration: config/default.yaml overlaid by AGENT_FIX_CONFIG (tools, loop, model). */
type OperatorConfig = AgentFixConfig;

/** The agent of a run: the worker's agent parts, the repository's settings, the job's trajectory and spend. */
export function agentOfRun(
  parts: AgentParts,
  config: LoadedRepoConfig,
  run: { name: string; job: { data: FixJobData }; log: Logger },
): Promise<AgentRunner> {
  const installation = run.job.data.installationId;
  const spend = parts.spendOf?.(run.job.data);
  return createAgentRunner(
    {
      operator: parts.operator,
      trajectoryDir: parts.trajectoryDir,
      ...(parts.trajectorySink ? { trajectorySink: parts.trajectorySink(run.job.data, run.name) } : {}),
      env: parts.env,
      allowRepoReplay: parts.allowRepoReplay,
      logger: run.log,
      installation,
      ...(spend ? { spend } : {}),
      ...(parts.modelOverride ? { modelOverride: parts.modelOverride } : {}),
    },
    { ...config.agent, testCommand: config.testCommand },
    run.name,
  );
}

interface AgentWiring {
  operator: OperatorConfig;
  /** Overrides everything (tests, demo, operators pinning a model): `openai:NAME` or `replay:FILE`. */
  modelOverride?: string;
  /** Where trajectories are written, one `JOB.traj` per run. */
  trajectoryDir?: string;
  /** Where every process of the deployment reads them (Redis). */
  trajectorySink?: TrajectorySink;
  /**
   * Whether a repository's config may name a `replay:FILE` model. Off in production: it would let a
   * repository make the worker read a host file. Tests and the demo turn it on.
   */
  allowRepoReplay?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The job's logger: model API retries are logged. */
  logger?: Logger;
  /** The run's installation: its model use and errors go to the metrics (worker/metrics.ts). */
  installation?: number;
  /** Told each model call's cost as it is billed: the installation's monthly budget (worker/run/solve/monthly-spend.ts). */
  spend?: (costUsd: number) => Promise<void>;
}

/** The agent loop over the ACI, with the repository's model, limits and tool bundle applied. */
export async function createAgentRunner(
  wiring: AgentWiring,
  repo: Pick<PipelineRepoConfig, "maxSteps"> & {
    model?: string | undefined;
    maxCostUsd?: number | undefined;
    maxWallTimeSeconds?: number | undefined;
    toolBundle?: AciConfig["bundle"] | undefined;
    /** The gate's command, named in the agent's first prompt. */
    testCommand?: string | undefined;
    /** The repository's pull request template, which the model fills in as the description. */
    pullRequestTemplate?: PullRequestTemplate | undefined;
  },
  jobId: string,
): Promise<AgentRunner> {
  const { operator } = wiring;
  // Checked again here for callers that did not load the config through loadRepoConfig.
  checkModelChoice(repo.model, {
    defaultMaxSteps: operator.agent.limits.maxSteps,
    policy: operator.repository,
    model: operator.model,
    modelOverride: wiring.modelOverride,
    allowReplayModels: wiring.allowRepoReplay ?? false,
  });
  const spec = wiring.modelOverride ?? repo.model ?? operator.model.name;
  const onRetry = retryReport(wiring, spec);
  const created = await createModel(spec, {
    config: operator.model,
    ...(wiring.env ? { env: wiring.env } : {}),
    ...(onRetry ? { onRetry } : {}),
  });
  // Each call's cost as it is billed, so a run that later throws still counts it.
  const spend = wiring.spend;
  const model =
    wiring.installation !== undefined
      ? meteredModel(created, wiring.installation, spend)
      : spend
        ? observedModel(created, { answered: (answer) => spend(answer.costUsd) })
        : created;
  const agentConfig: AgentConfig = {
    ...operator.agent,
    limits: {
      ...operator.agent.limits,
      maxSteps: repo.maxSteps,
      ...(repo.maxCostUsd ? { maxCostUsd: repo.maxCostUsd } : {}),
      ...(repo.maxWallTimeSeconds ? { maxWallTimeSeconds: repo.maxWallTimeSeconds } : {}),
    },
  };
  const aciConfig: AciConfig = { ...operator.aci, ...(repo.toolBundle ? { bundle: repo.toolBundle } : {}) };
  return async (input) => {
    const environment = await createEnvironment({
      sandbox: input.sandbox,
      config: aciConfig,
      expectedBase: input.baseCommit,
    });
    return runAgent({
      model,
      environment,
      config: agentConfig,
      issue: { title: input.issue.title, body: input.issue.body },
      repoName: input.repoName,
      ...(repo.testCommand ? { testCommand: repo.testCommand } : {}),
      ...(repo.pullRequestTemplate ? { pullRequestTemplate: repo.pullRequestTemplate } : {}),
      gate: input.gate,
      signal: input.signal,
      sandboxImage: input.sandbox.image,
      sandboxOrigin: input.sandbox.origin,
      configHash: operator.hash,
      ...(wiring.trajectoryDir ? { trajectoryPath: join(wiring.trajectoryDir, `${jobId}.traj`) } : {}),
      ...(wiring.trajectorySink ? { trajectorySink: wiring.trajectorySink } : {}),
      onStep: (event) => input.onStep({ step: event.step, entry: event.entry }),
    });
  };
}

/** Each retry of the model API logged, and counted when the run is metered. */
function retryReport(wiring: AgentWiring, model: string): ((event: RetryEvent) => void) | undefined {
  const { logger, installation } = wiring;
  if (!logger && installation === undefined) return undefined;
  const count = installation === undefined ? undefined : countModelRetry(model);
  return (event) => {
    logger?.warn(`model API failed (${event.reason}); retry ${event.attempt}`);
    count?.(event);
  };
}
