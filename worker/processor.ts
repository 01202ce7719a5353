/**
 * Composition root for one fix job: mints the installation's credentials on the host, builds the
 * concrete parts (sandbox provider, model, agent, GitHub writers), runs the pipeline, and maps
 * errors to BullMQ: retryable ones are retried (with a status line saying so), the rest fail for good.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Job } from "bullmq";
import { UnrecoverableError } from "bullmq";
import type { ProbotOctokit } from "probot";
import { parse as parseYaml } from "yaml";
import { type AciConfig, aciConfigSchema } from "../src/config/aci.js";
import { type AgentConfig, agentConfigSchema } from "../src/config/agent.js";
import { type ModelConfig, modelConfigSchema } from "../src/config/model.js";
import type { SandboxProvider } from "../src/contracts.js";
import { AgentFixError, ConfigError } from "../src/errors.js";
import { type FixJobData, parseFixJobData } from "../src/queue/index.js";
import { createEnvironment } from "./aci/index.js";
import { runAgent } from "./agent/index.js";
import { createModel } from "./model/index.js";
import type { AgentRunner } from "./pipeline/agent.js";
import type { InstallationAuth } from "./pipeline/auth.js";
import { type AbortReason, decodeAbortReason } from "./pipeline/cancel.js";
import type { CommitIdentity } from "./pipeline/commit.js";
import {
  type PipelineRepoConfig,
  type Publisher,
  type RunOutcome,
  runFix,
  type StatusReporter,
} from "./pipeline/run.js";

/** What one job needs, built once per process (or per test). */
export interface ProcessorDeps {
  auth: InstallationAuth;
  sandboxes: SandboxProvider;
  /** The app's commit identity (`SLUG[bot]`). */
  identity: CommitIdentity;
  /** The status comment of a job. */
  status(octokit: ProbotOctokit, job: FixJobData): StatusReporter;
  publisher(octokit: ProbotOctokit, job: FixJobData): Publisher;
  /** The agent for this repository's config (model, limits, tools). */
  agent(config: PipelineRepoConfig, job: FixJobData): Promise<AgentRunner>;
  loadConfig(checkoutDir: string): Promise<PipelineRepoConfig>;
  /** Operator-configured setup secrets for `owner/repo` (never the GitHub token). */
  setupSecrets(fullName: string): Record<string, string>;
  /** A cancel that arrived before this worker held the job. */
  pendingCancel(jobId: string): Promise<AbortReason | null>;
  workRoot?: string;
  log?: (message: string) => void;
}

export function createFixProcessor(deps: ProcessorDeps) {
  const log = deps.log ?? ((message: string) => console.log(`[worker] ${message}`));
  return async function processFixJob(
    job: Job<FixJobData>,
    signal: AbortSignal,
  ): Promise<RunOutcome["kind"]> {
    const data = parseFixJobData(job.data);
    const jobId = job.id ?? "";
    const octokit = await deps.auth.octokit(data.installationId).catch((error: unknown) => {
      throw queueError(error, job);
    });
    const status = deps.status(octokit, data);
    try {
      const early = await deps.pendingCancel(jobId);
      if (early) throw Object.assign(new Error("cancelled before start"), { abort: early });
      const { owner, repo, issueNumber } = data;
      const [repository, issue] = await Promise.all([
        octokit.rest.repos.get({ owner, repo }),
        octokit.rest.issues.get({ owner, repo, issue_number: issueNumber }),
      ]).catch((error: unknown) => {
        throw githubFailure(error, `reading ${owner}/${repo}#${issueNumber}`);
      });
      const outcome = await runFix({
        jobId,
        issue: { number: issueNumber, title: issue.data.title, body: issue.data.body ?? null },
        repository: {
          fullName: repository.data.full_name,
          cloneUrl: repository.data.clone_url,
          defaultBranch: repository.data.default_branch,
        },
        requestedBy: data.requestedBy,
        token: () => deps.auth.token(data.installationId),
        loadConfig: deps.loadConfig,
        setupSecrets: deps.setupSecrets(`${owner}/${repo}`),
        identity: deps.identity,
        sandboxes: deps.sandboxes,
        agentFor: (config) => deps.agent(config, data),
        publisher: deps.publisher(octokit, data),
        status,
        signal,
        ...(deps.workRoot ? { workRoot: deps.workRoot } : {}),
      });
      log(`job ${jobId}: ${outcome.kind}${outcome.kind === "pull_request" ? ` ${outcome.url}` : ""}`);
      return outcome.kind;
    } catch (error) {
      const abort =
        (error as { abort?: AbortReason }).abort ??
        (signal.aborted ? decodeAbortReason(signal.reason) : null);
      if (abort) {
        await finalStatus(() =>
          abort.kind === "shutdown"
            ? status.failed(
                "The worker running this was shut down before it finished. Add the label again to retry.",
              )
            : status.cancelled(abort.by),
        );
        throw new UnrecoverableError(`cancelled by ${abort.by}`);
      }
      const wrapped = queueError(error, job);
      if (wrapped instanceof UnrecoverableError) {
        await finalStatus(() => status.failed(describe(error)));
      } else {
        log(`job ${jobId}: retrying after ${describe(error)}`);
        await finalStatus(() =>
          status.progress("cloning", `retrying after a transient error: ${describe(error)}`),
        );
      }
      throw wrapped;
    }
  };
}

/** A status update must never hide the run's real error. */
async function finalStatus(update: () => Promise<void>): Promise<void> {
  await update().catch((error: unknown) =>
    console.error(`[worker] status comment update failed: ${String(error)}`),
  );
}

function describe(error: unknown): string {
  if (error instanceof AgentFixError) return error.describe();
  return error instanceof Error ? error.message : String(error);
}

/** Retryable errors stay as they are while attempts remain; everything else becomes UnrecoverableError. */
function queueError(error: unknown, job: Job<FixJobData>): Error {
  const attemptsLeft = (job.opts.attempts ?? 1) - (job.attemptsMade + 1) > 0;
  if (error instanceof AgentFixError && error.retryable && attemptsLeft) return error;
  if (error instanceof UnrecoverableError) return error;
  const wrapped = new UnrecoverableError(describe(error));
  (wrapped as Error & { cause?: unknown }).cause = error;
  return wrapped;
}

function githubFailure(error: unknown, what: string): AgentFixError {
  const status = (error as { status?: number }).status ?? 0;
  return new AgentFixError(
    `GitHub failed while ${what}: ${error instanceof Error ? error.message : String(error)}`,
    {
      code: `github_${status || "network"}`,
      fault: "github",
      retryable: status === 0 || status >= 500 || status === 429,
      cause: error,
    },
  );
}

/** The operator's defaults (config/default.yaml): tools, loop and model; a repository config narrows them. */
export interface OperatorConfig {
  aci: AciConfig;
  agent: AgentConfig;
  model: ModelConfig;
}

export const DEFAULT_CONFIG_PATH = join(import.meta.dirname, "..", "config", "default.yaml");

export async function loadOperatorConfig(path = DEFAULT_CONFIG_PATH): Promise<OperatorConfig> {
  const raw = (parseYaml(await readFile(path, "utf8")) ?? {}) as Record<string, unknown>;
  const section = <T>(
    name: string,
    schema: { safeParse(v: unknown): { success: boolean; data?: T; error?: unknown } },
  ) => {
    const parsed = schema.safeParse(raw[name] ?? {});
    if (!parsed.success) {
      const issues = (parsed.error as { issues: { path: PropertyKey[]; message: string }[] }).issues;
      const first = issues[0];
      throw new ConfigError(`${path}: ${name}.${first?.path.join(".")}: ${first?.message}`, {
        code: "operator_config_invalid",
        hint: "Fix the key named above; config/default.yaml documents every key.",
      });
    }
    return parsed.data as T;
  };
  return {
    aci: section<AciConfig>("aci", aciConfigSchema),
    agent: section<AgentConfig>("agent", agentConfigSchema),
    model: section<ModelConfig>("model", modelConfigSchema),
  };
}

export interface AgentWiring {
  operator: OperatorConfig;
  /** Overrides everything (tests, demo, operators pinning a model): `openai:NAME` or `replay:FILE`. */
  modelOverride?: string;
  /** Where trajectories are written, one `JOB.traj` per run. */
  trajectoryDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** The agent loop over the ACI, with the repository's model, limits and tool bundle applied. */
export async function createAgentRunner(
  wiring: AgentWiring,
  repo: Pick<PipelineRepoConfig, "maxSteps"> & {
    model?: string | undefined;
    maxCostUsd?: number | undefined;
    maxWallTimeSeconds?: number | undefined;
    toolBundle?: AciConfig["bundle"] | undefined;
  },
  jobId: string,
): Promise<AgentRunner> {
  const { operator } = wiring;
  const model = await createModel(wiring.modelOverride ?? repo.model, {
    config: operator.model,
    ...(wiring.env ? { env: wiring.env } : {}),
  });
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
    const environment = await createEnvironment({ sandbox: input.sandbox, config: aciConfig });
    return runAgent({
      model,
      environment,
      config: agentConfig,
      issue: { title: input.issue.title, body: input.issue.body },
      repoName: input.repoName,
      gate: input.gate,
      signal: input.signal,
      sandboxImage: input.sandbox.image,
      ...(wiring.trajectoryDir ? { trajectoryPath: join(wiring.trajectoryDir, `${jobId}.traj`) } : {}),
      onStep: (event) => input.onStep({ step: event.step, entry: event.entry }),
    });
  };
}
