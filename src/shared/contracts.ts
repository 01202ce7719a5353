/**
 * Every interface between the parts of agent-fix. Implementations live in sandbox/, worker/ and src/;
 * this file holds types only, so any part may import it without pulling code along.
 */
import type { Readable } from "node:stream";
import type { z } from "zod";

// ---------------------------------------------------------------------------------------------
// Sandbox: where untrusted code runs. A failed or timed-out command is a result, not an exception.
// ---------------------------------------------------------------------------------------------

export interface ExecOptions {
  /** Directory to run in, absolute or relative to `workdir`. Default: the session's current directory. */
  cwd?: string;
  /** Kill the command (and every process it started) after this long. Default: the sandbox's default. */
  timeoutMs?: number;
  /**
   * Extra variables for this command only. A command given `env` runs in a subshell, so neither the
   * variables nor a `cd` persist. Never pass credentials the agent must not see.
   */
  env?: Record<string, string>;
  /** Aborting kills the running command and disposes the sandbox. */
  signal?: AbortSignal;
}

export interface ExecResult {
  /** The command's exit status; 137 when it was killed (timeout or out of memory). */
  exitCode: number;
  /** stdout and stderr interleaved in the order written, capped: head and tail kept, a line says what was cut. */
  output: string;
  timedOut: boolean;
  /** The output was cut to fit the cap. */
  truncated: boolean;
  /** The kernel's out-of-memory killer ended a process of this command. */
  oomKilled: boolean;
  durationMs: number;
  /** The shell had died (e.g. `exit`) or was killed and has been restarted: cwd and variables are reset. */
  sessionRestarted: boolean;
}

export interface SandboxLimits {
  memoryBytes: number;
  /** CPU cores, fractional allowed. */
  cpus: number;
  /** Maximum number of processes (fork bomb containment). */
  pids: number;
}

export interface SandboxCreateOptions {
  /** Host directory copied into the sandbox as the repository (becomes `workdir`). */
  sourceDir: string;
  /** Job id, recorded as a label so orphans can be traced and reaped. */
  jobId: string;
  /** Network access while the sandbox starts; default false. Setup may need it, the agent never has it. */
  network?: boolean;
  limits?: Partial<SandboxLimits>;
  /** The only environment variables the sandbox sees (an allow-list; never the worker's own environment). */
  env?: Record<string, string>;
  /**
   * The run's toolchain variables (caches, a provided Node on PATH), as workspace paths: the driver
   * makes them absolute under `workdir` and puts them in every shell of the sandbox.
   */
  workspaceEnv?: WorkspaceEnv | undefined;
  /** Default per-command timeout. */
  defaultTimeoutMs?: number;
  /**
   * The image to run (Docker), already allowed by the operator's policy; the provider's default when
   * absent. An image that is not agent-fix's own is probed and prepared first (sandbox/docker/foreign-image.ts).
   */
  image?: string | undefined;
  /**
   * Or an image the provider builds, with no network, from the repository's checkout (a devcontainer's
   * build.dockerfile, checked by worker/run/configure/devcontainer-build.ts); built once for equal fields.
   */
  imageBuild?: RepoImageBuildSpec | undefined;
  /** Aborting stops what create() is doing that takes long (building the repository's image). */
  signal?: AbortSignal | undefined;
  /**
   * A setup sandbox whose result may be kept (PreparedEnvironments): a writable root, and setup's
   * commands as this user ("root" adds the capabilities package managers need, never NET_ADMIN).
   */
  setup?: { user: SetupUser } | undefined;
}

export type SetupUser = "agent" | "root";

/**
 * A run's toolchain variables: each names a directory of the workspace, relative to its root
 * (`.agent-fix-cache/go/mod`), after an optional fixed text (MAVEN_OPTS' `-Dmaven.repo.local=`), or is
 * a fixed value (GOTOOLCHAIN's `auto`); and directories of it to put before the image's PATH, in order.
 */
export interface WorkspaceEnv {
  vars: Record<string, { path: string; prefix?: string } | { value: string }>;
  path: string[];
}

/** The toolchains whose versions an image is probed for. */
export type Toolchain = "node" | "python" | "go" | "rust" | "ruby" | "java";

/** What an image provides: each toolchain's version as it reports it (`20.19.2`); absent: not installed. */
export interface ImageToolchains {
  /** The image as named (the provider's default resolved). */
  image: string;
  versions: Partial<Record<Toolchain, string>>;
}

/** An environment kept after setup (a committed image), and when it was prepared. */
export interface KeptEnvironment {
  /** The image sandboxes of later runs start from. */
  image: string;
  preparedAt: Date;
}

/** Why an environment was not kept, for the status comment and the log. */
export interface KeepRefusal {
  kind: "secret";
  /** Paths outside the workspace and the names of the secrets found in them (never their values). */
  hits: { path: string; name: string }[];
}

export interface KeepInput {
  /** What determines the environment (repository, commands, manifests), hashed with the image's id. */
  key: string;
  repository: string;
  /** False when a later run could not reproduce it (setup changed tracked files): kept for this run only. */
  reusable: boolean;
  /**
   * The workspace files to lay under later checkouts (what setup produced): a host directory and paths in
   * it; `hostFiles`, those of them a later run needs on the host too (the rest only its sandboxes do).
   */
  workspace: { dir: string; files: string[]; hostFiles: string[] };
  /** Secret names and the byte strings that give each away (the value, its base64 forms). */
  secrets: { name: string; forms: Buffer[] }[];
}

/** Environments kept after setup, found by key, least recently used ones evicted above a size. */
export interface PreparedEnvironments {
  /** The kept environment of `key` on `image` (the provider's default when undefined), marked used; or null. */
  find(key: string, image: string | undefined): Promise<KeptEnvironment | null>;
  /** The kept workspace files the host needs, as a tar stream of one top directory; null when none. */
  workspace(environment: KeptEnvironment): Promise<Readable | null>;
  /** Scans then commits a setup sandbox; a refusal when a secret is in what would be kept. */
  keep(sandbox: Sandbox, input: KeepInput): Promise<KeptEnvironment | KeepRefusal>;
}

export interface RepoImageBuildSpec {
  /** The checkout's root on the host. */
  root: string;
  /** The build context, relative to the root (it must resolve inside it). */
  context: string;
  /** The Dockerfile's checked text, used whatever the checkout holds (the provider executes it itself). */
  dockerfile: string;
  /** The images it starts from (allowed by the operator): each must be on the engine; none is pulled. */
  bases: string[];
  /** The repository: part of each step's cache key (no build reuses another repository's steps). */
  name: string;
}

/** Where a Docker sandbox's image came from: what trajectories record (a kept image's tag is deleted later). */
export interface SandboxOrigin {
  /** The image as the operator or the repository named it (a built repository image: its id). */
  image: string;
  /** Its id on the engine; null when the engine could not say (an environment kept before this was recorded). */
  imageId: string | null;
  /** The kept environment (warm start) the sandbox started from, when it did. */
  kept: { image: string; key: string; preparedAt: string } | null;
}

export interface Sandbox {
  readonly id: string;
  readonly driver: "docker" | "local";
  /** Absolute path of the repository root inside the sandbox (`/workspace` in Docker). */
  readonly workdir: string;
  /** The image the container runs (a kept environment's tag) (Docker), or a description of the host (local). */
  readonly image: string;
  /** The image it came from, and the kept environment it started from (Docker); absent for the local driver. */
  readonly origin?: SandboxOrigin | undefined;
  /**
   * Milliseconds from the start of its creation to the end of each start-up phase (Docker); a sandbox a
   * standby served has a `standby` phase (sandbox/docker/standby.ts).
   */
  readonly startupPhases?: Readonly<Record<string, number>>;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /**
   * Byte-exact read of a file under `workdir` (relative or absolute path). Throws SandboxError with code
   * `path_outside_workspace`, `not_found`, `is_directory` or `file_too_large`.
   */
  readFile(path: string, options?: { maxBytes?: number }): Promise<Buffer>;
  /** Byte-exact write, creating parent directories; same path rules and errors as readFile. */
  writeFile(path: string, data: Buffer | string): Promise<void>;
  /**
   * A tar stream of the workspace's files as they are now, every `.git` and every directory named in
   * `excludeDirs` left out, hard links stored as plain files. Made outside the agent's shell (Docker: a
   * fresh Engine API exec of tar), so nothing the agent defined there acts on it. The stream errors
   * (SandboxError `export_failed`) when a file cannot be read.
   */
  exportWorkspace(options?: { excludeDirs?: readonly string[] }): Promise<Readable>;
  /** Connect or cut the network (Docker). The local driver cannot isolate and says so. */
  setNetwork(enabled: boolean): Promise<void>;
  /** Remove the container and its volume (or the temp dir). Idempotent. */
  dispose(): Promise<void>;
}

export interface SandboxProvider {
  readonly driver: "docker" | "local";
  create(options: SandboxCreateOptions): Promise<Sandbox>;
  /** Where setup's result is kept for later runs; absent when the driver cannot keep one. */
  readonly environments?: PreparedEnvironments | undefined;
  /**
   * The id of a repository's image, built now (each step's image is kept: the same Dockerfile over the
   * same copied files gives the same id) or by an earlier call; `signal` (the run's cancel) stops the
   * build. Absent when the driver builds none.
   */
  readonly repoImage?: ((build: RepoImageBuildSpec, signal?: AbortSignal) => Promise<string>) | undefined;
  /**
   * The toolchain versions `image` (the provider's default when undefined) provides, probed once per
   * image id; rejects when the image is not on the engine. Absent when the driver cannot tell.
   */
  readonly toolchains?: ((image: string | undefined) => Promise<ImageToolchains>) | undefined;
  /**
   * The provider one run (its job id) uses for all of its calls, so that what it keeps, builds and starts
   * is in one place (a pool of Docker engines: the engine the run holds, sandbox/docker/engine-pool.ts).
   * Absent: the provider itself serves every run.
   */
  readonly forRun?: ((jobId: string) => SandboxProvider) | undefined;
}

// ---------------------------------------------------------------------------------------------
// Model: one chat completion. Messages follow OpenAI's chat format so any compatible API fits.
// ---------------------------------------------------------------------------------------------

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; content: string; tool_call_id: string };

export type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;

/** A tool as offered to a function-calling model (OpenAI `tools[].function`). */
export interface FunctionSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelUsage {
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
}

export interface ModelResponse {
  message: AssistantMessage;
  usage: ModelUsage;
  costUsd: number;
}

export interface Model {
  /** e.g. `openai:gpt-4.1` or `replay:FILE`; recorded in trajectories. */
  readonly name: string;
  /** Where its costs come from (the price table's date), or that it is unpriced and counted as 0. */
  readonly costNote?: string;
  query(messages: ChatMessage[], tools: FunctionSpec[], signal?: AbortSignal): Promise<ModelResponse>;
}

// ---------------------------------------------------------------------------------------------
// Tools and the Agent-Computer Interface (worker/aci/).
// ---------------------------------------------------------------------------------------------

/** What the viewer and shell remember between steps. */
export interface AciState {
  /** Open file, relative to the repository root; null when none. */
  openFile: string | null;
  /** First line of the viewer window (1-based). */
  windowStart: number;
  /** The shell's current directory (absolute, inside the sandbox). */
  workingDir: string;
}

export interface ToolContext {
  sandbox: Sandbox;
  state: AciState;
  signal?: AbortSignal;
}

export interface ToolResult {
  observation: string;
  /** The arguments were missing, malformed or the tool unknown: the loop counts a format error. */
  formatError?: boolean;
  /** Set by `submit`: the episode ends with this patch ("" = no changes). */
  submission?: string;
  /**
   * Set for tools that change files: false when nothing was written because the change was refused (an
   * edit the syntax gate rejected, an `old_str` that matched nowhere). The loop watcher reads it.
   */
  edited?: boolean;
}

/**
 * One definition per tool: the zod object (its key order is the positional order in text mode)
 * yields both the OpenAI function schema and the text-mode documentation.
 */
export interface Tool<Args extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  /** One paragraph shown to the model. */
  doc: string;
  parameters: z.ZodObject<z.ZodRawShape>;
  /** Text mode: the argument that takes the lines after the command line, up to `end_of_edit`. */
  multilineArg?: keyof Args & string;
  run(args: Args, context: ToolContext): Promise<ToolResult>;
}

/** The ACI as the agent loop sees it: a bundle of tools over one sandbox. */
export interface Environment {
  readonly bundle: string;
  readonly version: string;
  readonly tools: readonly Tool[];
  functionSpecs(): FunctionSpec[];
  /** Documentation of every tool for the system prompt (text-mode and function-calling alike). */
  docs(): string;
  /** Validates the arguments and runs the tool; never throws for bad input from the model. */
  execute(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult>;
  state(): AciState;
  /** The current diff against the starting commit, as `submit` would produce it. */
  diff(): Promise<string>;
}

// ---------------------------------------------------------------------------------------------
// Trajectory: field names follow SWE-agent's `.traj` so their tools can read ours.
// ---------------------------------------------------------------------------------------------

/** Why the loop ended. `exit_gate`: the repository's tests still failed after the last gate attempt. */
export type ExitReason =
  | "submitted"
  | "exit_gate"
  | "exit_format"
  | "exit_step_limit"
  | "exit_cost"
  | "exit_time"
  | "exit_context"
  | "exit_api"
  | "exit_replay_exhausted"
  | "exit_cancelled"
  | "exit_error";

/** How a run ended, as code reads it; `exitStatusText` and `exitOf` (worker/agent/exit.ts) convert. */
export interface RunExit {
  reason: ExitReason;
  /** A change was recorded as the submission although the run did not end on an accepted submit. */
  keptChange: boolean;
}

/**
 * How a run ended as the trajectory records it (SWE-agent's form): the reason, or `submitted (REASON)`
 * when a run that ended otherwise kept a change as its submission.
 */
export type ExitStatus = ExitReason | `submitted (${Exclude<ExitReason, "submitted">})`;

export interface TrajectoryStep {
  thought: string;
  action: string;
  observation: string;
  response: string;
  execution_time: number;
  state: { open_file: string | null; working_dir: string };
  tool: string;
  args: unknown;
  tokens: { sent: number; received: number };
  /** The gate run (info.gate[N-1].attempt) this step's submit caused, if any. */
  gate_attempt?: number;
  /** The model's reply as received: what `agent-fix eval-replays` turns into a replay file. */
  message?: AssistantMessage;
}

export interface GateRecord {
  attempt: number;
  passed: boolean;
  output: string;
  durationMs: number;
}

export interface TrajectoryInfo {
  exit_status: ExitStatus | null;
  submission: string | null;
  model_stats: { tokens_sent: number; tokens_received: number; api_calls: number; instance_cost: number };
  gate: GateRecord[];
  model: string;
  config_hash: string;
  tool_bundle: string;
  aci_version: string;
  /** The image the run's sandboxes came from, as named (SandboxOrigin.image), or the local host's description. */
  sandbox_image: string;
  /** That image's id on the engine (Docker). */
  sandbox_image_id?: string | null;
  /** The kept environment the sandboxes started from (warm start), null when setup ran or none was kept. */
  kept_environment?: { image: string; key: string; prepared_at: string } | null;
  started_at: string;
  finished_at: string | null;
  /** The pull request's description as the model gave it on submit; absent when it gave none. */
  description?: string;
  /** The repository's pull request template the model was asked to fill in, by its path. */
  pull_request_template?: string;
  [extra: string]: unknown;
}

export interface Trajectory {
  trajectory: TrajectoryStep[];
  history: ChatMessage[];
  info: TrajectoryInfo;
}

/**
 * Runs the repository's tests on a submitted change (the pipeline's gate). `submission`, when given,
 * is the change as the gate itself computed and tested it; it replaces what the agent submitted.
 */
export type Gate = (
  patch: string,
  signal?: AbortSignal,
) => Promise<{
  passed: boolean;
  output: string;
  submission?: string;
  /** Nothing was tested (the change was refused as received): the model is told, no attempt is used. */
  untested?: boolean;
}>;
