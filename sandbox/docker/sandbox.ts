/** One Docker sandbox: a hardened container driven through its shells (made by sandbox/docker/provider.ts). */
import path from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import type { SandboxOrigin } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import {
  assertWritableSize,
  disposedError,
  outsideError,
  SessionSandbox,
  type SessionSandboxSettings,
} from "../session-sandbox.js";
import { ansiC, ShellSession } from "../shell/session.js";
import { containerDown } from "./engine-fault.js";
import {
  AGENT_USER,
  attachShell,
  exportWithTar,
  type FileShellBinaries,
  helperShells,
  ROOT_SETUP_SHELL,
} from "./exec.js";
import { CONTROL_INIT, FILE_INIT, WORKDIR } from "./helper-scripts.js";
import { removeSandboxResources } from "./remove.js";
import { megabytes } from "./spec.js";

interface DockerSandboxInit {
  id: string;
  image: string;
  origin: SandboxOrigin;
  /** The setup network's name while connected (or connectable), null without. */
  network: string | null;
  env: string[];
  /** Setup as root: the commands' shell is root's, without NET_ADMIN (the egress rules stay). */
  rootShell: boolean;
  settings: SessionSandboxSettings;
  workspaceBytes: number;
  fileShellBinaries: FileShellBinaries;
}

export class DockerSandbox extends SessionSandbox {
  readonly driver = "docker" as const;
  readonly workdir = WORKDIR;
  readonly id: string;
  readonly image: string;
  readonly origin: SandboxOrigin;
  protected readonly agent: ShellSession;
  /** Root: kills and probes. */
  private readonly control: ShellSession;
  /** uid 1000, execute-only binaries: reads and writes files. */
  private readonly files: ShellSession;
  /** Processes that belong to the container itself (the main `sleep`), never killed. */
  private protectedPids = "";
  private oomCount = -1;
  private networkConnected: boolean;
  private readonly networkName: string | null;
  private readonly workspaceBytes: number;
  private disposing: Promise<void> | undefined;
  /** Milliseconds from the start of create() to the end of each start-up phase (they overlap). */
  startupPhases: Record<string, number> = {};

  constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    init: DockerSandboxInit,
  ) {
    super(init.settings);
    this.id = init.id;
    this.image = init.image;
    this.origin = init.origin;
    this.networkName = init.network;
    this.networkConnected = init.network !== null;
    this.workspaceBytes = init.workspaceBytes;
    const helpers = helperShells(init.fileShellBinaries);
    this.control = new ShellSession({
      name: "control",
      spawn: () => attachShell(docker, container, helpers.control),
      init: CONTROL_INIT,
      whyNoShell: () => containerDown(container),
    });
    this.files = new ShellSession({
      name: "file",
      spawn: () => attachShell(docker, container, helpers.files),
      init: FILE_INIT,
      whyNoShell: () => containerDown(container),
      killShell: async (pid) => {
        await this.controlRun(`kill -KILL ${pid}`, 10_000).catch(() => ""); // a shell already gone
      },
    });
    this.agent = new ShellSession({
      name: "agent",
      spawn: () =>
        attachShell(docker, container, {
          user: init.rootShell ? "0:0" : AGENT_USER,
          cmd: init.rootShell ? ROOT_SETUP_SHELL : ["bash", "--noprofile", "--norc"],
          env: init.env,
        }),
      killChildren: (pid) => this.kill(pid, false),
      whyNoShell: () => containerDown(container),
      killShell: async (pid) => {
        await this.kill(pid, true);
      },
    });
  }

  /** Container id (also its name and its volume's name). */
  get containerName(): string {
    return this.id;
  }

  /**
   * Attaches the agent's shell and the control shell at once (each costs an exec create and start over
   * the API); the control shell's probes follow. The file shell is startFileShell()'s.
   */
  async start(mark: (phase: string) => void = () => undefined): Promise<void> {
    const control = (async () => {
      await this.control.start();
      mark("control_shell");
      const probes = await this.controlRun("__af_initpids; __af_oom");
      const [pids = "", oom = "-1"] = probes.split("\n");
      this.protectedPids = pids.trim();
      this.oomCount = Number.parseInt(oom.trim(), 10);
      mark("probes");
    })();
    const agent = this.agent.start().then(() => mark("agent_shell"));
    await Promise.all([control, agent]);
  }

  /**
   * Attaches the file shell without waiting for it: a read or write waits for it (or starts it again if
   * this one failed), commands never do. It is the exec a file shell's restart makes during a run, with
   * the same walls (its binaries execute-only, so not dumpable from its exec on; runc's init is not
   * either). Started after the sandbox is ready, it takes no CPU from the copy before.
   */
  startFileShell(): void {
    if (this.disposed) return;
    this.files.start().catch(() => undefined); // the first read or write says why
  }

  private async controlRun(command: string, timeoutMs = 60_000): Promise<string> {
    return this.helperRun(this.control, command, timeoutMs);
  }

  private async fileRun(command: string, timeoutMs = 60_000, input?: string): Promise<string> {
    return this.helperRun(this.files, command, timeoutMs, input);
  }

  private async helperRun(
    session: ShellSession,
    command: string,
    timeoutMs: number,
    input?: string,
  ): Promise<string> {
    const r = await session.run(command, { timeoutMs, ...(input !== undefined ? { input } : {}) });
    if (r.timedOut)
      throw new SandboxError(`the sandbox's ${session.name} shell did not answer in ${timeoutMs} ms`, {
        code: "control_timeout",
      });
    return r.output;
  }

  /**
   * Kills what the agent's shell started: its descendants, its session, and every process reparented to
   * the container's init (all of them were started by the agent); the shell itself too when asked.
   * The root control shell first stops every process of the container (see KILL_FUNCTION).
   */
  private async kill(pid: number, self: boolean): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const keep = `${this.protectedPids} ${this.files.pid > 0 ? this.files.pid : ""}`.trim();
      const out = await this.controlRun(`__af_kill ${pid} ${self ? 1 : 0} 1 ${pid} ${keep}`, 15_000).catch(
        () => "",
      );
      if (out.includes("remaining 0")) return true;
      await sleep(200);
    }
    return false;
  }

  protected override async oomKilledSinceLastCheck(): Promise<boolean> {
    if (this.oomCount < 0 || this.disposed) return false;
    // Unreadable counts as "cannot tell" (-1): the command's own result stands.
    const now = Number.parseInt((await this.controlRun("__af_oom", 10_000).catch(() => "-1")).trim(), 10);
    if (!Number.isFinite(now) || now < 0) return false;
    const killed = now > this.oomCount;
    this.oomCount = now;
    return killed;
  }

  /** When a command failed for want of space, whether the workspace is what is full. */
  protected override async workspaceNote(output: string): Promise<string | undefined> {
    if (this.disposed || !/No space left on device/i.test(output)) return undefined;
    // Unreadable: no note, the command's own "No space left" stands.
    const [used = 0] = (await this.controlRun("__af_usage", 10_000).catch(() => "0 0"))
      .trim()
      .split(" ")
      .map(Number);
    // tmpfs keeps a few blocks back: "full" is within 1% of the size.
    if (used < this.workspaceBytes * 0.99) return undefined;
    return workspaceFullNote(this.workspaceBytes);
  }

  private absolute(requested: string): string {
    if (requested.includes("\0"))
      throw new SandboxError("a path cannot contain a NUL byte", { code: "invalid_argument" });
    return path.posix.resolve(WORKDIR, requested);
  }

  async readFile(file: string, options: { maxBytes?: number } = {}): Promise<Buffer> {
    if (this.disposed) throw disposedError();
    const asked = options.maxBytes ?? this.settings.maxFileBytes;
    const max = Number.isNaN(asked)
      ? 0
      : Math.max(0, Math.min(Math.floor(asked), Number.MAX_SAFE_INTEGER - 1));
    const absolute = this.absolute(file);
    const out = await this.fileRun(`__af_read ${ansiC(absolute)} ${max}`);
    const first = out.indexOf("\n");
    const status = first >= 0 ? out.slice(0, first) : out;
    if (status !== "OK") throw this.fileError(file, status, max);
    const second = out.indexOf("\n", first + 1);
    const trailer = second >= 0 ? out.slice(second + 1).trim() : "";
    if (second < 0 || trailer.length > 0) throw this.fileError(file, trailer || "ERR short read", max);
    const data = Buffer.from(out.slice(first + 1, second), "base64");
    if (data.length > max) {
      // Only the first max+1 bytes came over; ask for the real size for the message.
      const size = (await this.fileRun(`stat -L -c %s -- ${ansiC(absolute)}`)).trim();
      throw this.fileError(file, `BIG ${/^\d+$/.test(size) ? size : `more than ${max}`}`, max);
    }
    return data;
  }

  async writeFile(file: string, data: Buffer | string): Promise<void> {
    if (this.disposed) throw disposedError();
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    assertWritableSize(bytes, this.settings.maxFileBytes);
    // The content goes to the shell's stdin after the command line (see __af_write), not into it.
    const input = `${bytes.toString("base64")}\n`;
    const out = await this.fileRun(`__af_write ${ansiC(this.absolute(file))} ${input.length}`, 60_000, input);
    const status = out.trim();
    if (status !== "OK") throw this.fileError(file, status, this.settings.maxFileBytes);
  }

  private fileError(file: string, status: string, max: number): SandboxError {
    if (status === "OUT") return outsideError(file, WORKDIR);
    if (status === "DIR") return new SandboxError(`is a directory: ${file}`, { code: "is_directory" });
    if (status === "NOTFOUND") return new SandboxError(`no such file: ${file}`, { code: "not_found" });
    if (status === "NOTREG")
      return new SandboxError(`not a regular file: ${file}`, { code: "not_regular_file" });
    if (status.startsWith("BIG ")) {
      return new SandboxError(`file too large: ${file} has ${status.slice(4)} bytes, the limit is ${max}`, {
        code: "file_too_large",
      });
    }
    if (/No space left on device/i.test(status)) {
      return new SandboxError(
        `cannot write ${file}: the workspace is full (its limit is ${megabytes(this.workspaceBytes)})`,
        {
          code: "workspace_full",
          hint: "Delete files in the workspace (build output, caches); the operator sets the limit with AGENT_FIX_WORKSPACE_SIZE.",
        },
      );
    }
    return new SandboxError(`cannot access ${file}: ${status.replace(/^ERR /, "")}`, { code: "io_error" });
  }

  /** tar in a fresh Engine API exec: no shell, no startup file, the container's fixed environment. */
  async exportWorkspace(options: { excludeDirs?: readonly string[] } = {}): Promise<Readable> {
    if (this.disposed) throw disposedError();
    return exportWithTar(this.docker, this.container, options.excludeDirs ?? []);
  }

  async setNetwork(enabled: boolean): Promise<void> {
    if (this.disposed) throw disposedError();
    if (enabled === this.networkConnected) return;
    if (this.networkName === null) {
      throw new SandboxError("cannot connect the sandbox's network: it was created without one", {
        code: "network_unavailable",
        hint: "Create the sandbox with network: true to connect it later.",
      });
    }
    const network = this.docker.getNetwork(this.networkName);
    try {
      if (enabled) await network.connect({ Container: this.id });
      else await network.disconnect({ Container: this.id, Force: true });
      this.networkConnected = enabled;
    } catch (error) {
      throw new SandboxError(
        `cannot ${enabled ? "connect" : "cut"} the sandbox's network: ${(error as Error).message}`,
        { code: "network_unavailable", cause: error },
      );
    }
  }

  dispose(): Promise<void> {
    this.disposing ??= this.disposeNow();
    return this.disposing;
  }

  private async disposeNow(): Promise<void> {
    this.disposed = true;
    await Promise.all([this.agent.close(), this.control.close(), this.files.close()]);
    await removeSandboxResources(this.docker, this.id, this.id);
  }
}

/** What the agent reads under a command that filled the workspace. */
function workspaceFullNote(limitBytes: number): string {
  return `[the workspace is full: it holds at most ${megabytes(limitBytes)}; delete files (build output, caches, large generated files) to go on]`;
}
