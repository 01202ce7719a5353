/**
 * What both drivers share: the environment allow-list, defaults, and the `exec` logic over two
 * persistent shells (the agent's shell, and a control shell for killing, file operations and probes).
 */
import path from "node:path";
import type { Readable } from "node:stream";
import type {
  ExecOptions,
  ExecResult,
  Sandbox,
  SandboxLimits,
  WorkspaceEnv,
} from "../src/shared/contracts.js";
import { SandboxError } from "../src/shared/errors.js";
import { assertEnvNames, type ShellSession } from "./shell/session.js";

export const DEFAULT_LIMITS: SandboxLimits = { memoryBytes: 2 * 1024 ** 3, cpus: 1, pids: 512 };
const DEFAULT_TIMEOUT_MS = 120_000;
/** Cap of one command's captured output (head + tail). */
const DEFAULT_MAX_OUTPUT_CHARS = 100_000;
/** Cap of readFile / writeFile. */
const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Fixed variables every sandbox gets; nothing of the worker's own environment. */
export function safeEnv(home: string, path: string): Record<string, string> {
  return {
    PATH: path,
    HOME: home,
    USER: "agent",
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    TERM: "dumb",
    PAGER: "cat",
    GIT_PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
    NO_COLOR: "1",
    PYTHONUNBUFFERED: "1",
    DEBIAN_FRONTEND: "noninteractive",
  };
}

/** The allow-list given in the options on top of the fixed variables. */
export function sandboxEnv(
  fixed: Record<string, string>,
  extra: Record<string, string> | undefined,
): Record<string, string> {
  assertEnvNames(extra);
  return { ...fixed, ...(extra ?? {}) };
}

/**
 * The run's toolchain variables made absolute under `workdir`, its PATH directories before the
 * image's. A path leaving the workspace is refused: they name caches of the workspace only.
 */
export function withWorkspaceEnv(
  env: Record<string, string>,
  workspaceEnv: WorkspaceEnv | undefined,
  workdir: string,
): Record<string, string> {
  if (!workspaceEnv) return env;
  assertEnvNames(Object.fromEntries(Object.keys(workspaceEnv.vars).map((name) => [name, ""])));
  const inside = (relative: string) => {
    const absolute = path.posix.join(workdir, relative);
    if (path.posix.isAbsolute(relative) || !absolute.startsWith(`${workdir}/`))
      throw new SandboxError(`a workspace variable names ${relative}, outside the workspace`, {
        code: "path_outside_workspace",
        hint: "Name a directory of the workspace, relative to its root.",
      });
    return absolute;
  };
  const vars = Object.fromEntries(
    Object.entries(workspaceEnv.vars).map(([name, value]) => [
      name,
      "value" in value ? value.value : `${value.prefix ?? ""}${inside(value.path)}`,
    ]),
  );
  const searchPath = [...workspaceEnv.path.map(inside), ...(env.PATH ? [env.PATH] : [])].join(":");
  return { ...env, ...vars, PATH: searchPath };
}

export function envList(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

export function outsideError(requested: string, workdir: string): SandboxError {
  return new SandboxError(`path is outside the workspace ${workdir}: ${requested}`, {
    code: "path_outside_workspace",
    hint: "Use a path inside the repository.",
  });
}

export function disposedError(): SandboxError {
  return new SandboxError("the sandbox has been disposed", { code: "sandbox_disposed" });
}

function abortedError(reason: unknown): SandboxError {
  return new SandboxError("the command was cancelled; the sandbox has been disposed", {
    code: "aborted",
    cause: reason,
  });
}

export interface SessionSandboxSettings {
  defaultTimeoutMs: number;
  maxOutputChars: number;
  maxFileBytes: number;
}

/** The settings a provider takes from its options and from each create() call, defaults filled in. */
export function sessionSettings(
  provider: Partial<SessionSandboxSettings>,
  create: { defaultTimeoutMs?: number },
): SessionSandboxSettings {
  return {
    defaultTimeoutMs: create.defaultTimeoutMs ?? provider.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxOutputChars: provider.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
    maxFileBytes: provider.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
  };
}

/** writeFile's size cap, the same for both drivers. */
export function assertWritableSize(bytes: Buffer, maxFileBytes: number): void {
  if (bytes.length > maxFileBytes) {
    throw new SandboxError(`file too large: ${bytes.length} bytes, the limit is ${maxFileBytes}`, {
      code: "file_too_large",
    });
  }
}

/** exec() over a persistent agent shell; drivers add files, network and disposal. */
export abstract class SessionSandbox implements Sandbox {
  abstract readonly id: string;
  abstract readonly driver: "docker" | "local";
  abstract readonly workdir: string;
  abstract readonly image: string;
  protected disposed = false;
  protected abstract readonly agent: ShellSession;

  constructor(protected readonly settings: SessionSandboxSettings) {}

  abstract readFile(path: string, options?: { maxBytes?: number }): Promise<Buffer>;
  abstract writeFile(path: string, data: Buffer | string): Promise<void>;
  abstract setNetwork(enabled: boolean): Promise<void>;
  abstract exportWorkspace(options?: { excludeDirs?: readonly string[] }): Promise<Readable>;
  abstract dispose(): Promise<void>;

  /** Docker: did the kernel's OOM killer act since the last call? */
  protected async oomKilledSinceLastCheck(): Promise<boolean> {
    return false;
  }

  /** Docker: a line for the agent when a command failed because the workspace is full. */
  protected async workspaceNote(_output: string): Promise<string | undefined> {
    return undefined;
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.disposed) throw disposedError();
    if (options.signal?.aborted) {
      await this.dispose();
      throw abortedError(options.signal.reason);
    }
    assertEnvNames(options.env);
    const timeoutMs = options.timeoutMs ?? this.settings.defaultTimeoutMs;
    if (!(timeoutMs > 0))
      throw new SandboxError(`invalid timeout: ${timeoutMs}`, { code: "invalid_argument" });
    const result = await this.agent.run(command, {
      timeoutMs,
      maxOutputChars: this.settings.maxOutputChars,
      ...(options.cwd !== undefined ? { cwd: path.posix.resolve(this.workdir, options.cwd) } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (result.aborted) {
      await this.dispose();
      throw abortedError(options.signal?.reason);
    }
    if (this.disposed) throw disposedError();
    const oomKilled = await this.oomKilledSinceLastCheck();
    const note = result.exitCode !== 0 ? await this.workspaceNote(result.output) : undefined;
    return {
      exitCode: result.exitCode,
      output: note === undefined ? result.output : `${result.output.replace(/\n?$/, "\n")}${note}`,
      timedOut: result.timedOut,
      truncated: result.truncated,
      oomKilled,
      durationMs: Math.round(result.durationMs * 100) / 100,
      sessionRestarted: result.sessionRestarted,
    };
  }
}
