/**
 * The Sandbox contract as host processes in a temporary directory. It isolates NOTHING: commands run
 * on this machine as this user. For development and tests only; it must be chosen explicitly.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { pack } from "tar-fs";
import type { Sandbox, SandboxCreateOptions, SandboxProvider } from "../src/shared/contracts.js";
import { SandboxError } from "../src/shared/errors.js";
import {
  assertWritableSize,
  disposedError,
  outsideError,
  SessionSandbox,
  type SessionSandboxSettings,
  safeEnv,
  sandboxEnv,
  sessionSettings,
  withWorkspaceEnv,
} from "./session-sandbox.js";
import { KILL_FUNCTION, type ShellProcess, ShellSession } from "./shell/session.js";

export interface LocalSandboxProviderOptions extends Partial<SessionSandboxSettings> {
  /** Where the warning goes; default console.warn. */
  warn?: (message: string) => void;
  /** Parent of the temporary directories; default os.tmpdir(). */
  tmpDir?: string;
}

const LOCAL_WARNING =
  "agent-fix: the LOCAL sandbox driver isolates nothing: commands run on this host as this user, with its " +
  "network and files. Use it for development and tests only; use the docker driver for real jobs.";

export class LocalSandboxProvider implements SandboxProvider {
  readonly driver = "local" as const;
  private warned = false;

  constructor(private readonly options: LocalSandboxProviderOptions = {}) {}

  private warn(message: string): void {
    (this.options.warn ?? console.warn)(message);
  }

  async create(options: SandboxCreateOptions): Promise<Sandbox> {
    if (!this.warned) {
      this.warned = true;
      this.warn(LOCAL_WARNING);
    }
    const base = this.options.tmpDir ?? os.tmpdir();
    const root = await realpath(await mkdtemp(path.join(base, "agent-fix-local-")));
    try {
      const workdir = path.join(root, "workspace");
      const home = path.join(root, "home");
      await mkdir(home, { recursive: true });
      await cp(options.sourceDir, workdir, { recursive: true, verbatimSymlinks: true, errorOnExist: false });
      await mkdir(workdir, { recursive: true });
      const env = withWorkspaceEnv(
        sandboxEnv(safeEnv(home, process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"), options.env),
        options.workspaceEnv,
        workdir,
      );
      const sandbox = new LocalSandbox(
        root,
        workdir,
        env,
        sessionSettings(this.options, options),
        (message) => this.warn(message),
      );
      await sandbox.start();
      return sandbox;
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      throw error;
    }
  }
}

function spawnShell(cwd: string, env: Record<string, string>): Promise<ShellProcess> {
  return new Promise((resolve, reject) => {
    // detached: the shell leads its own session, so the killer can find what it started by session id.
    // The shell's own stderr is dropped: each command's stderr goes to stdout inside the command line;
    // what is left there is bash's job notices ("Killed ...") about background jobs, printed late.
    const child: ChildProcess = spawn("bash", ["--noprofile", "--norc"], {
      cwd,
      env,
      detached: true,
      stdio: ["pipe", "pipe", "ignore"],
    });
    const output = child.stdout!;
    const exited = new Promise<number | null>((r) => {
      child.once("exit", (code, signal) =>
        r(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 9) : null)),
      );
    });
    child.once("error", reject);
    child.once("spawn", () =>
      resolve({
        stdin: child.stdin!,
        output,
        exited,
        destroy: () => {
          if (child.exitCode === null && child.signalCode === null) {
            try {
              process.kill(-child.pid!, "SIGKILL");
            } catch {
              child.kill("SIGKILL");
            }
          }
          child.stdin?.destroy();
        },
      }),
    );
  });
}

export class LocalSandbox extends SessionSandbox {
  readonly id: string;
  readonly driver = "local" as const;
  readonly image = `local:${os.hostname()} (no isolation)`;
  protected readonly agent: ShellSession;
  private readonly control: ShellSession;

  constructor(
    readonly root: string,
    readonly workdir: string,
    env: Record<string, string>,
    settings: SessionSandboxSettings,
    private readonly warn: (message: string) => void,
  ) {
    super(settings);
    this.id = `local-${path.basename(root)}-${randomBytes(3).toString("hex")}`;
    this.control = new ShellSession({
      name: "control",
      spawn: () => spawnShell(workdir, env),
      init: KILL_FUNCTION,
    });
    this.agent = new ShellSession({
      name: "agent",
      spawn: () => spawnShell(workdir, env),
      killChildren: async (pid) => this.kill(pid, false),
      killShell: async (pid) => {
        await this.kill(pid, true);
      },
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.control.start(), this.agent.start()]);
  }

  /** Kills what the agent shell started (its descendants and its session), and the shell itself if asked. */
  private async kill(pid: number, self: boolean): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const r = await this.control.run(`__af_kill ${pid} ${self ? 1 : 0} 0 ${pid}`, { timeoutMs: 10_000 });
      if (r.output.includes("remaining 0")) return true;
    }
    return false;
  }

  /** Resolves like `realpath -m`: symlinks followed, missing components taken as they are. */
  private async resolve(requested: string): Promise<string> {
    if (requested.includes("\0"))
      throw new SandboxError("a path cannot contain a NUL byte", { code: "invalid_argument" });
    const resolved = await realpathMissing(path.resolve(this.workdir, requested));
    if (resolved !== this.workdir && !resolved.startsWith(`${this.workdir}/`))
      throw outsideError(requested, this.workdir);
    return resolved;
  }

  async readFile(file: string, options: { maxBytes?: number } = {}): Promise<Buffer> {
    if (this.disposed) throw disposedError();
    const resolved = await this.resolve(file);
    const max = options.maxBytes ?? this.settings.maxFileBytes;
    const info = await stat(resolved).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR")
        throw new SandboxError(`no such file: ${file}`, { code: "not_found" });
      throw new SandboxError(`cannot read ${file}: ${error.message}`, { code: "io_error", cause: error });
    });
    if (info.isDirectory()) throw new SandboxError(`is a directory: ${file}`, { code: "is_directory" });
    if (!info.isFile()) throw new SandboxError(`not a regular file: ${file}`, { code: "not_regular_file" });
    if (info.size > max) {
      throw new SandboxError(`file too large: ${file} has ${info.size} bytes, the limit is ${max}`, {
        code: "file_too_large",
      });
    }
    return readFile(resolved);
  }

  async writeFile(file: string, data: Buffer | string): Promise<void> {
    if (this.disposed) throw disposedError();
    const resolved = await this.resolve(file);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    assertWritableSize(bytes, this.settings.maxFileBytes);
    const existing = await stat(resolved).catch(() => undefined);
    if (existing?.isDirectory()) throw new SandboxError(`is a directory: ${file}`, { code: "is_directory" });
    try {
      await mkdir(path.dirname(resolved), { recursive: true });
      await writeFile(resolved, bytes);
    } catch (error) {
      throw new SandboxError(`cannot write ${file}: ${(error as Error).message}`, {
        code: "io_error",
        cause: error,
      });
    }
  }

  /** tar-fs over the temp directory (the local driver isolates nothing anyway). */
  async exportWorkspace(options: { excludeDirs?: readonly string[] } = {}): Promise<Readable> {
    if (this.disposed) throw disposedError();
    const skipped = new Set([".git", ...(options.excludeDirs ?? [])]);
    const archive = pack(this.workdir, { ignore: (name) => skipped.has(path.basename(name)) });
    return archive as unknown as Readable;
  }

  async setNetwork(enabled: boolean): Promise<void> {
    if (!enabled)
      this.warn("agent-fix: the local sandbox driver cannot cut the network; commands still reach it.");
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const pid = this.agent.pid;
    if (pid > 0 && this.control.alive) await this.kill(pid, true).catch(() => false);
    await Promise.all([this.agent.close(), this.control.close()]);
    await rm(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** `realpath -m`: follows symlinks component by component; a missing component ends the walk. */
async function realpathMissing(absolute: string): Promise<string> {
  const parts = absolute.split("/").filter((p) => p.length > 0);
  let current = "/";
  let hops = 0;
  while (parts.length > 0) {
    const part = parts.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(next);
    } catch {
      return path.resolve(next, ...parts);
    }
    if (info.isSymbolicLink()) {
      if (++hops > 40)
        throw new SandboxError(`too many levels of symbolic links: ${absolute}`, { code: "io_error" });
      const target = await readlink(next);
      parts.unshift(...target.split("/").filter((p) => p.length > 0));
      if (target.startsWith("/")) current = "/";
      continue;
    }
    current = next;
  }
  return current;
}
