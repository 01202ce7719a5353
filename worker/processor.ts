/**
 * Composition root for one fix job: mints the installation's credentials on the host, builds the
 * concrete parts (sandbox provider, model, agent, GitHub writers), runs the pipeline, and maps
 * errors to BullMQ: retryable ones are retried (with a status line saying so), the rest fail for good.
 */
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Job } from "bullmq";
import { UnrecoverableError } from "bullmq";
import { createProbot, type Probot, ProbotOctokit } from "probot";
import { z } from "zod";
import { DockerSandboxProvider, defaultWorkerId } from "../sandbox/docker.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import { reapSandboxes, workerAliveOnThisHost } from "../sandbox/reaper.js";
import type { AciConfig } from "../src/config/aci.js";
import type { AgentConfig } from "../src/config/agent.js";
import { type Env, hasAppCredentials, parseEnv } from "../src/config/env.js";
import type { SandboxProvider } from "../src/contracts.js";
import { AgentFixError, ConfigError } from "../src/errors.js";
import { githubFailure, updateStatusComment } from "../src/github/index.js";
import {
  connectRedis,
  createFixQueue,
  DEFAULT_QUEUE_NAME,
  enqueueFix,
  type FixJobData,
  fixJobId,
  parseFixJobData,
  readCancelRequest,
} from "../src/queue/index.js";
import { trajectoryUrl } from "../src/trajectories.js";
import { createEnvironment } from "./aci/index.js";
import { type AgentFixConfig, loadConfig } from "./agent/config-file.js";
import { runAgent } from "./agent/index.js";
import { createModel } from "./model/index.js";
import type { AgentRunner } from "./pipeline/agent.js";
import { type InstallationAuth, probotInstallationAuth } from "./pipeline/auth.js";
import { type AbortReason, decodeAbortReason } from "./pipeline/cancel.js";
import type { CommitIdentity } from "./pipeline/commit.js";
import { type LoadedRepoConfig, loadRepoConfig } from "./pipeline/config.js";
import { abandonedReason, type FinalizeAbandoned, markStatusFinal } from "./pipeline/final-status.js";
import { githubPublisher, githubStatusReporter } from "./pipeline/publish.js";
import { loadReviewRun, reviewPublisher } from "./pipeline/review.js";
import {
  type PipelineRepoConfig,
  type Publisher,
  type RunOutcome,
  type RunTimings,
  runFix,
  type StatusReporter,
} from "./pipeline/run.js";

/** Kept by BullMQ as the job's return value: what happened, and where the time went. */
export interface JobResult {
  kind: RunOutcome["kind"];
  url?: string;
  number?: number;
  reason?: string;
  exitStatus: string | null;
  timings: RunTimings;
}

/** What one job needs, built once per process (or per test). */
export interface ProcessorDeps {
  auth: InstallationAuth;
  sandboxes: SandboxProvider;
  /** The app's commit identity (`SLUG[bot]`). */
  identity: CommitIdentity;
  /** The status comment of a job. */
  /** `run` names this run: its trajectory is `run.traj` (see runName). */
  status(octokit: ProbotOctokit, job: FixJobData, run: string): StatusReporter;
  publisher(octokit: ProbotOctokit, job: FixJobData, run: string): Publisher;
  /** The agent for this repository's config (model, limits, tools). */
  agent(config: PipelineRepoConfig, job: FixJobData, run: string): Promise<AgentRunner>;
  loadConfig(checkoutDir: string, job: FixJobData): Promise<PipelineRepoConfig>;
  /** Operator-configured setup secrets for `owner/repo` (never the GitHub token). */
  setupSecrets(fullName: string): Record<string, string>;
  /** A cancel that arrived before this worker held the job. */
  pendingCancel(jobId: string): Promise<AbortReason | null>;
  /**
   * Called for a cancelled job once it has left the active state: a start that arrived while the
   * cancel was under way (label removed and added back quickly) was refused as a duplicate then,
   * so the issue is looked at again and re-queued if it still asks for a run.
   */
  afterCancel?(job: FixJobData, octokit: ProbotOctokit): void;
  workRoot?: string;
  log?: (message: string) => void;
}

export function createFixProcessor(deps: ProcessorDeps) {
  const log = deps.log ?? ((message: string) => console.log(`[worker] ${message}`));
  return async function processFixJob(job: Job<FixJobData>, signal: AbortSignal): Promise<JobResult> {
    const data = parseFixJobData(job.data);
    const jobId = job.id ?? "";
    const octokit = await deps.auth.octokit(data.installationId).catch((error: unknown) => {
      throw queueError(error, job);
    });
    const run = runName(data);
    const status = deps.status(octokit, data, run);
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
        loadConfig: (dir) => deps.loadConfig(dir, data),
        setupSecrets: deps.setupSecrets(`${owner}/${repo}`),
        identity: deps.identity,
        sandboxes: deps.sandboxes,
        agentFor: (config) => deps.agent(config, data, run),
        publisher: deps.publisher(octokit, data, run),
        status,
        signal,
        ...(deps.workRoot ? { workRoot: deps.workRoot } : {}),
        // Review runs: the pull request's branch, and the issue plus the review as the task.
        ...(data.trigger === "review"
          ? await loadReviewRun(octokit, data, {
              number: issueNumber,
              title: issue.data.title,
              body: issue.data.body ?? null,
            })
          : {}),
      });
      log(`job ${jobId}: ${outcome.kind}${outcome.kind === "pull_request" ? ` ${outcome.url}` : ""}`);
      // A cancel that came as the run finished found nothing left to stop, and a start right after it
      // was refused as a duplicate of this still-active job: look at the issue again once it is done.
      if (await deps.pendingCancel(jobId).catch(() => null)) deps.afterCancel?.(data, octokit);
      return {
        kind: outcome.kind,
        ...(outcome.kind === "pull_request"
          ? { url: outcome.url, number: outcome.number }
          : { reason: outcome.reason }),
        exitStatus: outcome.trajectory?.info.exit_status ?? null,
        timings: outcome.timings,
      };
    } catch (error) {
      const abort =
        (error as { abort?: AbortReason }).abort ??
        (signal.aborted ? decodeAbortReason(signal.reason) : null);
      if (abort) {
        const written = await finalStatus(() =>
          abort.kind === "shutdown"
            ? status.failed(
                "The worker running this was shut down before it finished. Add the label again to retry.",
              )
            : status.cancelled(abort.by),
        );
        if (abort.kind === "cancelled") deps.afterCancel?.(data, octokit);
        const cancelled = new UnrecoverableError(`cancelled by ${abort.by}`);
        throw written ? markStatusFinal(cancelled) : cancelled;
      }
      const wrapped = queueError(error, job);
      if (wrapped instanceof UnrecoverableError) {
        // Unmarked when the update failed: the worker's 'failed' listener tries again.
        if (await finalStatus(() => status.failed(describe(error)))) markStatusFinal(wrapped);
      } else {
        log(`job ${jobId}: retrying after ${describe(error)}`);
        await finalStatus(() =>
          status.progress("cloning", { note: `Retrying after a transient error: ${describe(error)}` }),
        );
      }
      throw wrapped;
    }
  };
}

/** A status update must never hide the run's real error. Whether it was written. */
async function finalStatus(update: () => Promise<void>): Promise<boolean> {
  return update().then(
    () => true,
    (error: unknown) => {
      console.error(`[worker] status comment update failed: ${String(error)}`);
      return false;
    },
  );
}

/**
 * The final status of a job that ended with no processor to write it: a fresh installation client
 * (minted on the host), the job's status comment, the reason in a maintainer's words.
 */
export function finalizeAbandonedWith(
  auth: InstallationAuth,
  status: ProcessorDeps["status"],
): FinalizeAbandoned {
  return async (job, abandonment) => {
    const octokit = await auth.octokit(job.installationId);
    await status(octokit, job, runName(job)).failed(abandonedReason(abandonment));
  };
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

const UnthrottledOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  throttle: { ...(options.throttle as object), enabled: false },
}));

/** The operator's configuration: config/default.yaml overlaid by AGENT_FIX_CONFIG (tools, loop, model). */
export type OperatorConfig = AgentFixConfig;

export function loadOperatorConfig(overlay?: string): Promise<OperatorConfig> {
  return loadConfig(overlay ? { files: [overlay] } : {});
}

export interface AgentWiring {
  operator: OperatorConfig;
  /** Overrides everything (tests, demo, operators pinning a model): `openai:NAME` or `replay:FILE`. */
  modelOverride?: string;
  /** Where trajectories are written, one `JOB.traj` per run. */
  trajectoryDir?: string;
  /**
   * Whether a repository's config may name a `replay:FILE` model. Off in production: it would let a
   * repository make the worker read a host file. Tests and the demo turn it on.
   */
  allowRepoReplay?: boolean;
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
  if (!wiring.modelOverride && repo.model?.startsWith("replay:") && !wiring.allowRepoReplay) {
    throw new ConfigError(".github/agent-fix.yml is invalid: `model`: replay models are for tests only", {
      code: "repo_config_invalid",
      hint: "Example of the right form:\nmodel: openai:gpt-4.1",
    });
  }
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
      configHash: operator.hash,
      ...(wiring.trajectoryDir ? { trajectoryPath: join(wiring.trajectoryDir, `${jobId}.traj`) } : {}),
      onStep: (event) => input.onStep({ step: event.step, entry: event.entry }),
    });
  };
}

/** The worker's own variables, beside the shared ones of src/config/env.ts; one line each. */
export const workerEnvSchema = z.object({
  AGENT_FIX_LOCK_MS: z.coerce.number().int().min(1000).default(60_000), // a dead worker's job moves on this long after its last lock renewal
  AGENT_FIX_STALLED_INTERVAL_MS: z.coerce.number().int().min(100).optional(), // how often workers look for such jobs (default: half the lock)
  AGENT_FIX_REAPER_INTERVAL_MS: z.coerce.number().int().min(1000).default(300_000), // how often orphaned sandboxes are looked for
  AGENT_FIX_WORKER_TAG: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .optional(), // workers with a tag reap only sandboxes of the same tag
  AGENT_FIX_SANDBOX: z.enum(["docker", "local"]).default("docker"), // local isolates nothing: development only
  AGENT_FIX_SANDBOX_IMAGE: z.string().min(1).optional(), // default: the versioned image of sandbox/version.ts
  AGENT_FIX_MODEL: z.string().min(1).optional(), // overrides the repository's and operator's model: openai:NAME or replay:FILE
  AGENT_FIX_ALLOW_REPLAY_MODELS: z.enum(["true", "false"]).default("false"), // let repo configs name replay:FILE (tests and demo only)
  AGENT_FIX_CONFIG: z.string().min(1).optional(), // a YAML file overlaid on config/default.yaml (tools, loop, model)
  AGENT_FIX_SETUP_SECRETS: z.string().default("{}"), // JSON {"owner/repo": {"NAME": "value"}}: for that repository's setup only
  AGENT_FIX_WORK_DIR: z.string().min(1).optional(), // where host checkouts are made (default: the temp dir)
});
export type WorkerEnv = Env & z.infer<typeof workerEnvSchema> & { APP_ID: number };

export function parseWorkerEnv(env: NodeJS.ProcessEnv): WorkerEnv {
  const shared = parseEnv(env);
  if (!hasAppCredentials(shared) || shared.APP_ID === undefined) {
    throw new ConfigError("APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are needed by the worker", {
      code: "env_invalid",
      hint: "Register the app first (npm start without credentials runs the manifest flow), then set both in .env.",
    });
  }
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = workerEnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`Invalid environment: ${issue.path.join(".")}: ${issue.message}`, {
      code: "env_invalid",
      hint: "See the comments in worker/processor.ts (workerEnvSchema).",
    });
  }
  parseSetupSecrets(parsed.data.AGENT_FIX_SETUP_SECRETS); // fail at start, not on the first job
  return { ...shared, ...parsed.data, APP_ID: shared.APP_ID };
}

function parseSetupSecrets(text: string): Record<string, Record<string, string>> {
  const schema = z.record(z.string(), z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError("environment variable AGENT_FIX_SETUP_SECRETS is not valid", {
      code: "worker_env_invalid",
      hint: 'Use JSON like {"owner/repo": {"NPM_TOKEN": "..."}}: variable names as keys, strings as values.',
    });
  }
  return parsed.data;
}

export interface BuiltWorker {
  /** Options for startFixWorker (worker/index.ts). */
  workerOptions: {
    redisUrl: string;
    prefix: string;
    queueName: string;
    concurrency: number;
    lockDurationMs: number;
    stalledIntervalMs?: number;
    process: (job: Job<FixJobData>, signal: AbortSignal) => Promise<JobResult>;
    onAbandoned: FinalizeAbandoned;
    reap?: () => Promise<unknown>;
    reaperIntervalMs?: number;
  };
  graceMs: number;
  /** Releases what the processor holds (Redis connection). */
  close(): Promise<void>;
}

/** Builds the concrete parts from the environment: the one place the worker's classes are made. */
export async function createProcessorFromEnv(env: NodeJS.ProcessEnv): Promise<BuiltWorker> {
  const settings = parseWorkerEnv(env);
  const operator = await loadOperatorConfig(settings.AGENT_FIX_CONFIG);
  const probot = createProbot({
    // Client-side rate limiting spaces writes seconds apart: right for GitHub, off for the stand-ins.
    // (The function form: an object passed to defaults() loses to Probot's own throttle options.)
    ...(settings.AGENT_FIX_GITHUB_THROTTLE ? {} : { overrides: { Octokit: UnthrottledOctokit } }),
    env: {
      APP_ID: String(settings.APP_ID),
      ...(settings.PRIVATE_KEY ? { PRIVATE_KEY: settings.PRIVATE_KEY } : {}),
      ...(settings.PRIVATE_KEY_PATH ? { PRIVATE_KEY_PATH: settings.PRIVATE_KEY_PATH } : {}),
      ...(settings.GHE_HOST ? { GHE_HOST: settings.GHE_HOST, GHE_PROTOCOL: settings.GHE_PROTOCOL } : {}),
      LOG_LEVEL: settings.LOG_LEVEL,
    },
  });
  const auth = probotInstallationAuth(probot);
  const identity = await appIdentity(probot, settings);
  const docker = settings.AGENT_FIX_SANDBOX === "docker";
  const tag = settings.AGENT_FIX_WORKER_TAG;
  const dockerProvider = docker
    ? new DockerSandboxProvider({
        ...(settings.AGENT_FIX_SANDBOX_IMAGE ? { image: settings.AGENT_FIX_SANDBOX_IMAGE } : {}),
        ...(tag ? { workerId: `${tag}/${defaultWorkerId()}` } : {}),
      })
    : undefined;
  const sandboxes: SandboxProvider = dockerProvider ?? new LocalSandboxProvider();
  const redis = await connectRedis(settings.AGENT_FIX_REDIS_URL, "worker");
  const names = { prefix: settings.AGENT_FIX_QUEUE_PREFIX, name: DEFAULT_QUEUE_NAME, redis };
  const secrets = parseSetupSecrets(settings.AGENT_FIX_SETUP_SECRETS);
  const trajectoryDir = resolve(settings.AGENT_FIX_TRAJECTORY_DIR);
  // With PUBLIC_URL the status and summary link the full trajectory, served (signed) by src/trajectories.ts.
  const linkTo = (run: string) =>
    settings.PUBLIC_URL && settings.WEBHOOK_SECRET
      ? { trajectoryUrl: trajectoryUrl(settings.PUBLIC_URL, settings.WEBHOOK_SECRET, `${run}.traj`) }
      : {};
  await mkdir(trajectoryDir, { recursive: true });
  const defaultMaxSteps = operator.agent.limits.maxSteps;
  const repoConfigs = new Map<string, LoadedRepoConfig>();
  const allowRepoReplay = settings.AGENT_FIX_ALLOW_REPLAY_MODELS === "true";

  const producer = createFixQueue(redis, { prefix: settings.AGENT_FIX_QUEUE_PREFIX });
  const deps: ProcessorDeps = {
    afterCancel: (job, octokit) => {
      // A cancelled review run is not redone as an issue run (that would replace the reviewed branch).
      if (job.trigger === "review") return;
      const jobId = fixJobId(job.repoId, job.issueNumber);
      // Poll until the cancelled job has left the active state, then ask GitHub what the issue wants now.
      void (async () => {
        for (let i = 0; i < 100; i++) {
          const state = await producer.queue.getJobState(jobId);
          if (state !== "active") break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const { data: issue } = await octokit.rest.issues.get({
          owner: job.owner,
          repo: job.repo,
          issue_number: job.issueNumber,
        });
        const labelled = issue.labels.some(
          (l) => (typeof l === "string" ? l : l.name) === settings.AGENT_FIX_LABEL,
        );
        if (issue.state !== "open" || !labelled) return;
        const result = await enqueueFix(producer, { ...job, deliveryId: `relabel-${randomUUID()}` });
        if (result.status === "queued" && job.statusCommentId) {
          await updateStatusComment(
            octokit,
            { owner: job.owner, repo: job.repo },
            job.statusCommentId,
            { kind: "progress", phase: "queued" },
            { requestedBy: job.requestedBy },
          );
        }
      })().catch((error: unknown) =>
        console.error(`[worker] re-check after cancel failed: ${String(error)}`),
      );
    },
    auth,
    sandboxes,
    identity,
    status: (octokit, job, run) => githubStatusReporter(octokit, job, linkTo(run)),
    publisher: (octokit, job, run) =>
      job.trigger === "review"
        ? reviewPublisher(octokit, job, linkTo(run))
        : githubPublisher(octokit, job, linkTo(run)),
    agent: (config, job, run) => {
      const loaded = repoConfigs.get(jobKey(job));
      repoConfigs.delete(jobKey(job));
      return createAgentRunner(
        {
          operator,
          trajectoryDir,
          env,
          allowRepoReplay,
          ...(settings.AGENT_FIX_MODEL ? { modelOverride: settings.AGENT_FIX_MODEL } : {}),
        },
        loaded?.agent ?? { maxSteps: config.maxSteps },
        run,
      );
    },
    loadConfig: async (dir, job) => {
      const loaded = await loadRepoConfig(dir, defaultMaxSteps);
      if (loaded.agent.model?.startsWith("replay:") && !allowRepoReplay) {
        throw new ConfigError(".github/agent-fix.yml is invalid: `model`: replay models are for tests only", {
          code: "repo_config_invalid",
          hint: "Example of the right form:\nmodel: openai:gpt-4.1",
        });
      }
      repoConfigs.set(jobKey(job), loaded);
      return loaded;
    },
    setupSecrets: (fullName) => secrets[fullName] ?? {},
    pendingCancel: async (jobId) => {
      const request = await readCancelRequest(names, jobId);
      return request ? { kind: "cancelled", by: request.by, reason: request.reason } : null;
    },
    ...(settings.AGENT_FIX_WORK_DIR ? { workRoot: settings.AGENT_FIX_WORK_DIR } : {}),
  };
  const workerOptions: BuiltWorker["workerOptions"] = {
    redisUrl: settings.AGENT_FIX_REDIS_URL,
    prefix: settings.AGENT_FIX_QUEUE_PREFIX,
    queueName: DEFAULT_QUEUE_NAME,
    concurrency: settings.AGENT_FIX_CONCURRENCY,
    lockDurationMs: settings.AGENT_FIX_LOCK_MS,
    ...(settings.AGENT_FIX_STALLED_INTERVAL_MS
      ? { stalledIntervalMs: settings.AGENT_FIX_STALLED_INTERVAL_MS }
      : {}),
    process: createFixProcessor(deps),
    onAbandoned: finalizeAbandonedWith(deps.auth, deps.status),
    // Sandboxes of workers that died (SIGKILL, OOM, host reboot) are removed at start and on a timer.
    ...(dockerProvider
      ? {
          reap: () =>
            reapSandboxes({
              docker: dockerProvider.docker,
              log: (message) => console.log(`[worker] reaper: ${message}`),
              // Tagged workers touch only their own group's sandboxes (tests sharing an engine).
              ...(tag
                ? {
                    maxAgeMs: Number.POSITIVE_INFINITY,
                    isWorkerAlive: (id: string) =>
                      !id.startsWith(`${tag}/`) || workerAliveOnThisHost(id.slice(tag.length + 1)),
                  }
                : {}),
            }),
          reaperIntervalMs: settings.AGENT_FIX_REAPER_INTERVAL_MS,
        }
      : {}),
  };
  return {
    workerOptions,
    graceMs: settings.AGENT_FIX_SHUTDOWN_GRACE_SECONDS * 1000,
    close: async () => {
      await producer.close().catch(() => {});
      redis.disconnect();
    },
  };
}

/** A run's name, unique and safe as a file name: OWNER-REPO-ISSUE-MILLISECONDS. */
export function runName(job: FixJobData, now = Date.now()): string {
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, "_");
  return `${safe(job.owner)}-${safe(job.repo)}-${job.issueNumber}-${now}`;
}

function jobKey(job: FixJobData): string {
  return `${job.repoId}:${job.issueNumber}`;
}

/** `SLUG[bot]` with GitHub's noreply address, so commits show as the app's. */
async function appIdentity(probot: Probot, settings: WorkerEnv): Promise<CommitIdentity> {
  const app = await probot.auth();
  const { data } = await app.rest.apps.getAuthenticated().catch((error: unknown) => {
    throw new ConfigError(`Cannot authenticate as the GitHub App ${settings.APP_ID}: ${String(error)}`, {
      code: "app_auth_failed",
      hint: "Check APP_ID, PRIVATE_KEY and GHE_HOST.",
    });
  });
  const slug = data?.slug ?? "agent-fix";
  const login = `${slug}[bot]`;
  const user = await app.rest.users.getByUsername({ username: login }).catch(() => null);
  const host = settings.GHE_HOST
    ? `users.noreply.${settings.GHE_HOST.replace(/:\d+$/, "")}`
    : "users.noreply.github.com";
  return { name: login, email: user ? `${user.data.id}+${login}@${host}` : `${login}@${host}` };
}
