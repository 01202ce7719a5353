/**
 * The whole product on one machine, as the end-to-end tests, the demo and the pipeline benchmark run
 * it: the GitHub and git stand-in, the real webhook server (src/server/app-server.ts) and the real worker
 * (worker/main.ts + worker/main.ts), sharing the real Redis, with sandboxes on the real Docker
 * engine. Only addresses differ from production: GHE_HOST/GHE_PROTOCOL point at the stand-in.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Docker from "dockerode";
import type { Logger } from "pino";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { type AppServer, startAppServer } from "../../src/server/app-server.js";
import { parseEnv } from "../../src/shared/config/env.js";
import { mergeConfig } from "../../worker/agent/config-file.js";
import type { WorkerTuning } from "../../worker/config/worker-tuning.js";
import { createProcessorFromEnv, type FixWorker, startFixWorker } from "../../worker/main.js";
import { BUILT_SOURCES_ENV, builtEntry } from "./built-sources.js";
import { GitHubServer, type StandInIssue } from "./github-server.js";
import { silentLogger } from "./logs.js";
import { redisUrl } from "./services.js";
import {
  FIXTURES,
  filesOf,
  type IssueRef,
  labelPayload,
  SAMPLE_ISSUE,
  SAMPLE_REPLAY,
  SAMPLE_REPO_DIR,
  sendWebhook,
} from "./stack-parts.js";

export interface StackOptions {
  /**
   * The model for every run, `replay:FILE` (default: the sample's recorded fix) or `openai:NAME`;
   * null to let each repository's config name its own (see sampleConfig).
   */
  model?: string | null;
  sandbox?: "docker" | "local";
  /** Start an in-process worker (default true); tests of worker death start child workers instead. */
  worker?: boolean;
  /** Short locks so a killed worker's job moves on quickly (tests): the operator's `worker.lockMs`. */
  lockMs?: number;
  /**
   * The operator's `worker:` tuning (kept environments, standbys, intervals) over the stack's own: no
   * kept environments (each would be an image) and short locks. Written, with the file a test's
   * AGENT_FIX_CONFIG names under it, to the YAML file the worker is given as AGENT_FIX_CONFIG.
   */
  workerTuning?: DeepPartial<WorkerTuning>;
  /** The app's slug: commits and comments come from `SLUG[bot]`. */
  appSlug?: string;
  /** Extra environment for the app and the worker. */
  env?: Record<string, string>;
  /** The in-process worker's own lines (its jobs log at LOG_LEVEL); none by default. */
  logger?: Logger;
  /**
   * AGENT_FIX_SETUP_SECRETS by `owner/repo`: bound, as an operator binds them, to the id and
   * installation the stand-in gives the sample repository of that name when a test adds it.
   */
  setupSecrets?: Record<string, Record<string, string>>;
  /**
   * The installation of the sample repositories (addSampleRepo), 1 by default. Stacks side by side in
   * one process need one each: @octokit/auth-app shares an installation token request in flight by
   * installation id across every app of the process (its module-level `pendingPromises`), so two
   * stand-ins' installations 1 would both get the token of whichever asked first.
   */
  installationId?: number;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object | null ? DeepPartial<T[K]> : T[K] };

/** Ids of the repositories setup secrets are bound to: far above the stand-in's own counter. */
const BOUND_REPOSITORY_IDS = 800_000;

export interface SampleRepo {
  owner: string;
  name: string;
  id: number;
  installationId: number;
}

export class Stack {
  readonly github: GitHubServer;
  readonly prefix = `af-e2e-${randomBytes(4).toString("hex")}`;
  readonly webhookSecret = randomUUID();
  env: Record<string, string> = {};
  app: AppServer | undefined;
  worker: FixWorker | undefined;
  private workerClose: (() => Promise<void>) | undefined;
  private children: ChildProcess[] = [];
  private trajectoryDir = "";
  /** The operator's YAML this stack wrote for its workers (writeOperatorConfig). */
  private operatorFile = "";
  /** The directory the stack made for it, when the test named no file of its own. */
  private operatorDir = "";
  /** Where this stack's workers make their host checkouts (AGENT_FIX_WORK_DIR). */
  workDir = "";

  constructor(private readonly options: StackOptions = {}) {
    this.github = new GitHubServer({ appSlug: options.appSlug ?? "agent-fix-e2e" });
  }

  async start(): Promise<this> {
    await this.github.start();
    this.trajectoryDir = await mkdtemp(join(tmpdir(), "af-e2e-traj-"));
    this.workDir = await mkdtemp(join(tmpdir(), "af-e2e-work-"));
    const lockMs = this.options.lockMs ?? 60_000;
    this.env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      APP_ID: String(this.github.appId),
      PRIVATE_KEY: this.github.keys.privateKeyPem,
      WEBHOOK_SECRET: this.webhookSecret,
      GHE_HOST: this.github.host,
      GHE_PROTOCOL: "http",
      HOST: "127.0.0.1",
      PORT: "0",
      AGENT_FIX_REDIS_URL: redisUrl(),
      AGENT_FIX_QUEUE_PREFIX: this.prefix,
      // The reaper of this stack's workers touches only this stack's sandboxes (others share the engine).
      AGENT_FIX_WORKER_TAG: this.prefix,
      AGENT_FIX_GITHUB_THROTTLE: "false",
      AGENT_FIX_JOB_ATTEMPTS: "2",
      // A retried job waits 2 s, not production's 30 s: what a test proves is that it is retried, and
      // the faults the tests inject are over by then. A test may set its own.
      AGENT_FIX_JOB_BACKOFF_SECONDS: "2",
      ...(this.options.model === null
        ? {}
        : { AGENT_FIX_MODEL: this.options.model ?? `replay:${SAMPLE_REPLAY}` }),
      AGENT_FIX_ALLOW_REPLAY_MODELS: "true",
      AGENT_FIX_SANDBOX: this.options.sandbox ?? "docker",
      AGENT_FIX_TRAJECTORY_DIR: this.trajectoryDir,
      AGENT_FIX_WORK_DIR: this.workDir,
      AGENT_FIX_SHUTDOWN_GRACE_SECONDS: "5",
      LOG_LEVEL: "warn",
      ...(this.options.setupSecrets ? { AGENT_FIX_SETUP_SECRETS: this.boundSecrets() } : {}),
      ...this.options.env,
    };
    this.env.AGENT_FIX_CONFIG = await this.writeOperatorConfig(lockMs, this.options.env?.AGENT_FIX_CONFIG);
    this.app = await startAppServer(parseEnv(this.env));
    // Known only now (port 0): the worker links trajectories served by this app.
    this.env.PUBLIC_URL = this.app.url;
    if (this.options.worker !== false) await this.startWorker();
    return this;
  }

  /**
   * The operator's YAML the workers get: the stack's tuning (short locks; no kept environments unless
   * a test asks, as test/e2e/warm-start.test.ts does: each would be an image), the test's own file over
   * it, `workerTuning` over both. Written beside the test's file, so its relative paths still hold.
   */
  private async writeOperatorConfig(lockMs: number, testFile: string | undefined): Promise<string> {
    const stackTuning = {
      worker: {
        lockMs,
        stalledIntervalMs: Math.max(500, Math.floor(lockMs / 4)),
        keptEnvironments: { size: 0 },
        // A taken standby keeps its `standby` job label: tests find a run's sandboxes by its job id.
        // Kept environments' standbys stay on (warm-start tests); bench/pipeline.ts asks for these.
        standby: { sharedImages: false },
      },
    };
    const fromTest = testFile ? parseYaml(await readFile(testFile, "utf8")) : {};
    const merged = mergeConfig(mergeConfig(stackTuning, fromTest), { worker: this.options.workerTuning });
    // Not in workDir or trajectoryDir: tests read those to see what runs left behind.
    const dir = testFile ? dirname(testFile) : await mkdtemp(join(tmpdir(), "af-e2e-config-"));
    const file = join(dir, `.${this.prefix}-operator.yml`);
    await writeFile(file, toYaml(merged));
    this.operatorFile = file;
    if (!testFile) this.operatorDir = dir;
    return file;
  }

  /** The id a repository of this name gets when a test adds it, when setup secrets are bound to it. */
  private boundId(fullName: string): number | undefined {
    const index = Object.keys(this.options.setupSecrets ?? {}).indexOf(fullName);
    return index < 0 ? undefined : BOUND_REPOSITORY_IDS + index;
  }

  private boundSecrets(): string {
    const entries = Object.entries(this.options.setupSecrets ?? {}).map(([name, secrets]) => [
      name,
      { repositoryId: this.boundId(name), installationId: this.options.installationId ?? 1, secrets },
    ]);
    return JSON.stringify(Object.fromEntries(entries));
  }

  /** An in-process worker over the same queue. */
  async startWorker(): Promise<FixWorker> {
    const built = await createProcessorFromEnv(this.env);
    this.worker = await startFixWorker({
      ...built.workerOptions,
      logger: this.options.logger ?? silentLogger(),
    });
    this.workerClose = built.close;
    return this.worker;
  }

  /** Stops the in-process worker as SIGTERM does (runs not done within `graceMs` are handed back). */
  async stopWorker(graceMs: number): Promise<void> {
    await this.worker?.shutdown(graceMs);
    await this.workerClose?.();
    this.worker = undefined;
    this.workerClose = undefined;
  }

  /**
   * A worker as its own process (`npm run start:worker`), e.g. to SIGKILL it mid-run: in a vitest run,
   * the same modules built once for the run (built-sources.ts), with their source maps so stack traces
   * name the .ts lines; elsewhere through tsx, as `npm run start:worker`.
   */
  spawnWorker(extraEnv: Record<string, string> = {}): ChildProcess {
    const args = process.env[BUILT_SOURCES_ENV]
      ? ["--enable-source-maps", builtEntry("worker/main.ts")]
      : ["--import", "tsx", "worker/main.ts"];
    const child = spawn(process.execPath, args, {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { ...this.env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.children.push(child);
    return child;
  }

  get webhookUrl(): string {
    return `${this.app?.url}/api/github/webhooks`;
  }

  /** The sample repository (a real bug in textstats.median) with its config, plus `extraFiles`. */
  async addSampleRepo(name = "textstats", extraFiles: Record<string, string> = {}): Promise<SampleRepo> {
    const files = { ...(await filesOf(SAMPLE_REPO_DIR)), ...extraFiles };
    const id = this.boundId(`octo/${name}`);
    const repo = await this.github.addRepo({
      owner: "octo",
      name,
      ...(id === undefined ? {} : { id }),
      installationId: this.options.installationId ?? 1,
      files,
      permissions: { maintainer: "write", outsider: "read" },
    });
    return { owner: repo.owner, name: repo.name, id: repo.id, installationId: repo.installationId };
  }

  addIssue(repo: SampleRepo, issue: { title: string; body: string } = SAMPLE_ISSUE): IssueRef {
    const created: StandInIssue = this.github.addIssue(repo.owner, repo.name, { ...issue, user: "reporter" });
    return {
      owner: repo.owner,
      repo: repo.name,
      repoId: repo.id,
      installationId: repo.installationId,
      number: created.number,
      title: created.title,
      body: created.body,
    };
  }

  /** Sends `issues.labeled` signed with the app's secret, as GitHub would; returns the HTTP status. */
  label(issue: IssueRef, sender = "maintainer", deliveryId?: string): Promise<number> {
    const standIn = this.github.state.issue(issue.owner, issue.repo, issue.number);
    if (standIn && !standIn.labels.includes("agent-fix")) standIn.labels.push("agent-fix");
    return this.send("issues", labelPayload(issue, "labeled", sender), deliveryId);
  }

  unlabel(issue: IssueRef, sender = "maintainer"): Promise<number> {
    const standIn = this.github.state.issue(issue.owner, issue.repo, issue.number);
    if (standIn) standIn.labels = standIn.labels.filter((l) => l !== "agent-fix");
    return this.send("issues", labelPayload(issue, "unlabeled", sender));
  }

  send(event: string, payload: unknown, deliveryId?: string, url = this.webhookUrl): Promise<number> {
    return sendWebhook({ url, secret: this.webhookSecret }, event, payload, deliveryId);
  }

  /**
   * This stack's sandboxes (its workers' tag), optionally of one job: stacks running side by side
   * share the Docker engine and number their repositories alike.
   */
  async containers(jobId?: string) {
    const all = await new Docker().listContainers({
      all: true,
      filters: { label: [jobId ? `agent-fix.job=${jobId}` : "agent-fix.job"] },
    });
    return all.filter((c) => c.Labels["agent-fix.worker"]?.startsWith(`${this.prefix}/`));
  }

  /** Whether the status comment's current step (the one marked ⏳) starts with `label`. */
  inPhase(issue: IssueRef, label: string): boolean {
    const current = this.statusComment(issue)
      ?.body.split("\n")
      .find((line) => line.includes("⏳"));
    return current?.includes(`**${label}`) ?? false;
  }

  /** The app's status comment once it is final (no step in progress), or undefined. */
  finalStatus(issue: IssueRef) {
    const comment = this.statusComment(issue);
    return comment && !comment.body.includes("⏳") ? comment : undefined;
  }

  /** The app's status comment on an issue (the one carrying its marker), or undefined. */
  statusComment(issue: IssueRef) {
    return this.github.state
      .commentsOn(issue.owner, issue.repo, issue.number)
      .find((c) => c.body.includes("<!-- agent-fix:status -->"));
  }

  pulls(issue: IssueRef) {
    return this.github.state.pulls.filter((p) => p.owner === issue.owner && p.repo === issue.repo);
  }

  async stop(): Promise<void> {
    for (const child of this.children) child.kill("SIGKILL");
    await this.worker?.shutdown(0).catch(() => {});
    await this.workerClose?.().catch(() => {});
    if (this.app) {
      const { queue } = this.app;
      await queue.queue.obliterate({ force: true }).catch(() => {});
      const keys = await queue.redis.keys(`${this.prefix}:*`).catch(() => [] as string[]);
      if (keys.length > 0) await queue.redis.del(...keys).catch(() => {});
      await this.app.close().catch(() => {});
    }
    await this.github.stop();
    await rm(this.trajectoryDir, { recursive: true, force: true });
    if (this.operatorFile) await rm(this.operatorFile, { force: true });
    if (this.operatorDir) await rm(this.operatorDir, { recursive: true, force: true });
    await rm(this.workDir, { recursive: true, force: true });
  }
}

/** The sample's .github/agent-fix.yml with a replay of test/fixtures/replay/NAME (null: the operator's model). */
export function sampleConfig(
  replay: string | null,
  options: { setup?: string[]; network?: boolean; extra?: string } = {},
): Record<string, string> {
  const lines = [
    "setup:",
    `  commands: ${JSON.stringify(options.setup ?? [])}`,
    `  network: ${options.network ?? false}`,
    "test:",
    "  command: python3 -m unittest discover -s tests",
    "  timeoutSeconds: 120",
    ...(replay ? [`model: replay:${join(FIXTURES, "replay", replay)}`] : []),
    options.extra ?? "",
  ];
  return { ".github/agent-fix.yml": `${lines.join("\n")}\n` };
}
