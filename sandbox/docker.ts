/**
 * The Sandbox contract over the Docker Engine API (dockerode). One container per sandbox, hardened:
 * no network (unless asked for at start), all capabilities dropped, no-new-privileges, uid 1000,
 * memory/CPU/pid limits, an init process, a read-only root with tmpfs /tmp and $HOME, and the
 * repository on a named volume at /workspace. Two persistent shells are attached over the API: the
 * agent's, and a control shell for killing, file operations and probes (~1.5 ms a command instead of
 * ~81 ms for an Engine API exec).
 */

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { type Duplex, PassThrough, type Readable, Writable } from "node:stream";
import Docker from "dockerode";
import { pack } from "tar-fs";
import type { Sandbox, SandboxCreateOptions, SandboxLimits, SandboxProvider } from "../src/contracts.js";
import { SandboxError } from "../src/errors.js";
import {
  assertWritableSize,
  DEFAULT_LIMITS,
  disposedError,
  envList,
  outsideError,
  SessionSandbox,
  type SessionSandboxSettings,
  safeEnv,
  sandboxEnv,
  sessionSettings,
} from "./common.js";
import { ansiC, KILL_FUNCTION, type ShellProcess, ShellSession } from "./shell-session.js";
import { SANDBOX_IMAGE } from "./version.js";

export const WORKDIR = "/workspace";
export const SANDBOX_UID = 1000;
export const LABEL = {
  /** Present on every container and volume this driver makes. */
  sandbox: "agent-fix.sandbox",
  job: "agent-fix.job",
  worker: "agent-fix.worker",
  /** Milliseconds since the epoch. */
  created: "agent-fix.created",
  image: "agent-fix.image",
} as const;
const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const HOME = "/home/agent";

/** Identifies this process on this host, recorded on each sandbox so the reaper can tell orphans. */
export function defaultWorkerId(): string {
  return `${os.hostname()}:${process.pid}`;
}

export interface DockerSandboxProviderOptions extends Partial<SessionSandboxSettings> {
  docker?: Docker;
  /** Default: the versioned sandbox image (sandbox/version.ts). */
  image?: string;
  workerId?: string;
  limits?: Partial<SandboxLimits>;
  /** Size of the tmpfs at /tmp and at $HOME (they count against the memory limit). */
  tmpfsSize?: { tmp?: string; home?: string };
  /**
   * Keep the workspace volume in memory (a tmpfs volume of this size, e.g. "2g") instead of on the
   * host's disk. Unpacking a repository into a fresh disk volume is the slowest part of start-up
   * (~0.5 s for 1,000 files / 20 MB on a busy ext4, ~25 ms on tmpfs); the price is that the repository
   * and everything written under /workspace count against the container's memory limit.
   */
  workspaceTmpfsSize?: string;
}

/** Functions of the control shell: the killer (builtins only), file access inside /workspace, probes. */
const CONTROL_INIT = `${KILL_FUNCTION}
__af_path() {
  # Sets __af_p to the real path of $1 (absolute, normalised by the host) when it lies inside the
  # workspace. Builtins only unless a component is a symlink: then realpath (one fork) decides.
  local p=$1 q
  case $p in ${WORKDIR}|${WORKDIR}/*) ;; *) return 3 ;; esac
  q=$p
  while [[ $q == ${WORKDIR}/* ]]; do
    if [[ -L $q ]]; then
      p=$(realpath -m -- "$1" 2>/dev/null) || return 2
      case $p in ${WORKDIR}|${WORKDIR}/*) break ;; *) return 3 ;; esac
    fi
    q=\${q%/*}
  done
  __af_p=$p
}
__af_read() {
  # Prints a status line, then (OK) the first MAX+1 bytes in base64 on one line, then ERR on a failed read.
  local st
  __af_path "$1" || { echo OUT; return 0; }
  if [[ -d $__af_p ]]; then echo DIR; return 0; fi
  if [[ ! -e $__af_p ]]; then echo NOTFOUND; return 0; fi
  if [[ ! -f $__af_p ]]; then echo NOTREG; return 0; fi
  if [[ ! -r $__af_p ]]; then echo "ERR permission denied"; return 0; fi
  echo OK
  head -c $(($2 + 1)) -- "$__af_p" 2>/dev/null | base64 -w0
  st=\${PIPESTATUS[0]}\${PIPESTATUS[1]}
  echo
  [[ $st == 00 ]] || echo "ERR cannot read"
}
__af_write() {
  # The content arrives on the shell's stdin after the command line: $2 bytes of base64 and a newline,
  # consumed whatever happens (what is left unread would run as a command).
  local st=OK err d
  if ! __af_path "$1"; then st=OUT
  elif [[ -d $__af_p ]]; then st=DIR
  else
    d=\${__af_p%/*}
    [[ -d \${d:-/} ]] || err=$(mkdir -p -- "\${d:-/}" 2>&1) || st="ERR $err"
  fi
  if [[ $st != OK ]]; then head -c "$2" >/dev/null; echo "$st"; return 0; fi
  head -c "$2" | { err=$(base64 -d 2>&1 >"$__af_p") && echo OK || { cat >/dev/null; echo "ERR $err"; }; }
}
__af_oom() {
  local k v f
  for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
    [[ -r $f ]] || continue
    while read -r k v; do [[ $k == oom_kill ]] && { echo "$v"; return 0; }; done <"$f"
  done
  echo -1
}
__af_initpids() {
  local f line rest st
  for f in /proc/[0-9]*/stat; do
    { read -r line <"$f"; } 2>/dev/null || continue
    rest=\${line##*) }
    st=($rest)
    [[ \${st[1]} == 1 ]] && printf '%s ' "\${line%% *}"
  done
  echo
}`;

function workspaceVolumeOptions(tmpfsSize: string | undefined): Record<string, string> {
  if (tmpfsSize === undefined) return {};
  if (!/^\d+[kmg]?$/i.test(tmpfsSize)) {
    throw new SandboxError(`invalid workspace tmpfs size: ${tmpfsSize}`, {
      code: "invalid_argument",
      hint: 'Give a size such as "2g" or "512m".',
    });
  }
  return {
    type: "tmpfs",
    device: "tmpfs",
    o: `size=${tmpfsSize},uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0755,nosuid,nodev`,
  };
}

function isNotFound(error: unknown): boolean {
  return (error as { statusCode?: number }).statusCode === 404;
}

/** How every process of the sandbox runs: as the sandbox user in the workspace, stdio attached, no TTY. */
const SANDBOX_PROCESS = {
  AttachStdin: true,
  AttachStdout: true,
  AttachStderr: true,
  Tty: false,
  User: `${SANDBOX_UID}:${SANDBOX_UID}`,
  WorkingDir: WORKDIR,
} as const;

async function attachShell(
  docker: Docker,
  container: Docker.Container,
  env: string[],
): Promise<ShellProcess> {
  const exec = await container.exec({
    ...SANDBOX_PROCESS,
    Cmd: ["bash", "--noprofile", "--norc"],
    Env: env,
  });
  const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
  const output = new PassThrough();
  // The shell's own stderr is dropped: each command's stderr goes to stdout inside the command line;
  // what is left there is bash's job notices ("Killed ...") about background jobs, printed late.
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  docker.modem.demuxStream(stream, output, discard);
  const exited = new Promise<number | null>((resolve) => {
    let done = false;
    const finish = async () => {
      if (done) return;
      done = true;
      output.end();
      for (let i = 0; i < 10; i++) {
        try {
          const info = await exec.inspect();
          if (!info.Running) return resolve(info.ExitCode ?? null);
        } catch {
          return resolve(null);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      resolve(null);
    };
    stream.on("end", finish);
    stream.on("close", finish);
    stream.on("error", finish);
  });
  return { stdin: stream, output, exited, destroy: () => stream.destroy() };
}

/**
 * A tar stream of a directory: the host's GNU tar where there is one (about 30 times faster than tar-fs
 * on a repository of 1,000 files), else tar-fs.
 */
function packDirectory(dir: string, fail: (error: Error) => void): Readable {
  if (hostTar === undefined) {
    hostTar = spawnSync("tar", ["--version"], { encoding: "utf8" }).stdout?.includes("GNU tar") ?? false;
  }
  if (!hostTar) {
    const archive = pack(dir);
    archive.on("error", fail);
    return archive as unknown as Readable;
  }
  const child = spawn("tar", ["-c", "-f", "-", "--warning=no-file-changed", "-C", dir, "."], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2000);
  });
  child.on("error", fail);
  child.on("close", (code) => {
    // 1 is GNU tar's "a file changed as we read it": the archive is whole, and the change is the host's.
    if (code !== 0 && code !== 1)
      fail(new SandboxError(`cannot pack ${dir}: ${stderr.trim()}`, { code: "copy_failed" }));
  });
  return child.stdout;
}
let hostTar: boolean | undefined;

const COPY_DONE = "__AF_COPY_DONE__";
const COPY_FAILED = "__AF_COPY_FAILED__";
const COPY_THEN_SLEEP = `if tar -x -p -f - -C ${WORKDIR} 2>&1; then echo ${COPY_DONE}; else echo ${COPY_FAILED}; fi; exec sleep infinity`;

/**
 * Streams `sourceDir` as a tar into the stdin of the container's main process (attached before the
 * start, so the host reads files while the container starts). Resolves once it is unpacked.
 */
async function copyIn(docker: Docker, container: Docker.Container, sourceDir: string): Promise<void> {
  const stream = (await container.attach({
    stream: true,
    stdin: true,
    stdout: true,
    stderr: true,
    hijack: true,
  })) as Duplex;
  return new Promise<void>((resolve, reject) => {
    let text = "";
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      if (error) reject(error);
      else resolve();
    };
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        text = (text + chunk.toString("utf8")).slice(-4000);
        if (text.includes(COPY_DONE)) finish();
        else if (text.includes(COPY_FAILED)) {
          const message = text.replace(COPY_FAILED, "").trim();
          finish(new SandboxError(`cannot copy the repository in: ${message}`, { code: "copy_failed" }));
        }
        done();
      },
    });
    docker.modem.demuxStream(stream, sink, sink);
    stream.on("error", (error: Error) => finish(error));
    stream.on("end", () =>
      finish(
        new SandboxError("the sandbox ended while the repository was copied in", { code: "copy_failed" }),
      ),
    );
    const archive = packDirectory(sourceDir, finish);
    archive.pipe(stream);
  });
}

export class DockerSandboxProvider implements SandboxProvider {
  readonly driver = "docker" as const;
  readonly docker: Docker;
  readonly image: string;
  readonly workerId: string;
  private readonly workspaceVolume: Record<string, string>;

  constructor(private readonly options: DockerSandboxProviderOptions = {}) {
    this.workspaceVolume = workspaceVolumeOptions(options.workspaceTmpfsSize);
    this.docker = options.docker ?? new Docker();
    this.image = options.image ?? SANDBOX_IMAGE;
    this.workerId = options.workerId ?? defaultWorkerId();
  }

  async create(options: SandboxCreateOptions): Promise<Sandbox> {
    const limits = { ...DEFAULT_LIMITS, ...this.options.limits, ...options.limits };
    const env = sandboxEnv(safeEnv(HOME, SANDBOX_PATH), options.env);
    const name = `agent-fix-${randomBytes(6).toString("hex")}`;
    const labels: Record<string, string> = {
      [LABEL.sandbox]: "1",
      [LABEL.job]: options.jobId,
      [LABEL.worker]: this.workerId,
      [LABEL.created]: String(Date.now()),
      [LABEL.image]: this.image,
    };
    const tmpSize = this.options.tmpfsSize?.tmp ?? "1g";
    const homeSize = this.options.tmpfsSize?.home ?? "512m";
    const network = options.network === true;
    const began = performance.now();
    const phases: Record<string, number> = {};
    const mark = (phase: string) => {
      phases[phase] = Math.round((performance.now() - began) * 10) / 10;
    };
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer({
        name,
        Image: this.image,
        // The main process first unpacks the repository from its stdin (streamed while the container
        // starts), says so, then becomes `sleep`. Cheaper than putArchive, which re-mounts and chroots.
        Cmd: ["bash", "-c", COPY_THEN_SLEEP],
        ...SANDBOX_PROCESS,
        OpenStdin: true,
        StdinOnce: true,
        Env: envList(env),
        Labels: labels,
        HostConfig: {
          NetworkMode: network ? "bridge" : "none",
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          Init: true,
          ReadonlyRootfs: true,
          Tmpfs: {
            "/tmp": `rw,nosuid,nodev,size=${tmpSize},mode=1777`,
            [HOME]: `rw,nosuid,nodev,size=${homeSize},uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0755`,
          },
          Memory: limits.memoryBytes,
          MemorySwap: limits.memoryBytes,
          NanoCpus: Math.round(limits.cpus * 1e9),
          PidsLimit: limits.pids,
          Mounts: [
            {
              Type: "volume",
              Source: name,
              Target: WORKDIR,
              VolumeOptions: {
                NoCopy: false,
                Labels: labels,
                DriverConfig: { Name: "local", Options: this.workspaceVolume },
              },
            },
          ],
          LogConfig: { Type: "none", Config: {} },
        },
      });
    } catch (error) {
      if (isNotFound(error)) {
        throw new SandboxError(`the sandbox image ${this.image} is missing`, {
          code: "image_missing",
          hint: "Build it with `npm run sandbox:image` (sandbox/image/build.sh).",
          cause: error,
        });
      }
      throw new SandboxError(`cannot create a sandbox container: ${(error as Error).message}`, {
        code: "docker_unavailable",
        retryable: true,
        cause: error,
      });
    }
    mark("container_created");
    const sandbox = new DockerSandbox(
      this.docker,
      container,
      name,
      this.image,
      network,
      envList(env),
      sessionSettings(this.options, options),
    );
    try {
      const copied = copyIn(this.docker, container, options.sourceDir).then(() => mark("copied"));
      await container.start();
      mark("started");
      await Promise.all([copied, sandbox.start(mark)]);
      mark("ready");
      sandbox.startupPhases = phases;
      return sandbox;
    } catch (error) {
      await sandbox.dispose().catch(() => undefined);
      if (error instanceof SandboxError) throw error;
      throw new SandboxError(`cannot start the sandbox: ${(error as Error).message}`, {
        code: "sandbox_start_failed",
        retryable: true,
        cause: error,
      });
    }
  }
}

export class DockerSandbox extends SessionSandbox {
  readonly driver = "docker" as const;
  readonly workdir = WORKDIR;
  protected readonly agent: ShellSession;
  private readonly control: ShellSession;
  /** Processes that belong to the container itself (the main `sleep`), never killed. */
  private protectedPids = "";
  private oomCount = -1;
  private disposing: Promise<void> | undefined;
  /** Milliseconds from the start of create() to the end of each start-up phase (they overlap). */
  startupPhases: Record<string, number> = {};

  constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    readonly id: string,
    readonly image: string,
    private networkConnected: boolean,
    env: string[],
    settings: SessionSandboxSettings,
  ) {
    super(settings);
    this.control = new ShellSession({
      name: "control",
      spawn: () => attachShell(docker, container, env),
      init: CONTROL_INIT,
    });
    this.agent = new ShellSession({
      name: "agent",
      spawn: () => attachShell(docker, container, env),
      killChildren: (pid) => this.kill(pid, false),
      killShell: async (pid) => {
        await this.kill(pid, true);
      },
    });
  }

  /** Container id (also its name and its volume's name). */
  get containerName(): string {
    return this.id;
  }

  /** Attaches both shells at once (each costs an exec create and start over the API). */
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

  private async controlRun(command: string, timeoutMs = 60_000, input?: string): Promise<string> {
    const r = await this.control.run(command, { timeoutMs, ...(input !== undefined ? { input } : {}) });
    if (r.timedOut)
      throw new SandboxError(`the sandbox's control shell did not answer in ${timeoutMs} ms`, {
        code: "control_timeout",
      });
    return r.output;
  }

  /**
   * Kills what the agent's shell started: its descendants, its session, and every process reparented to
   * the container's init (all of them were started by the agent); the shell itself too when asked.
   */
  private async kill(pid: number, self: boolean): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const out = await this.controlRun(
        `__af_kill ${pid} ${self ? 1 : 0} 1 ${pid} ${this.protectedPids}`,
        15_000,
      ).catch(() => "");
      if (out.includes("remaining 0")) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  protected override async oomKilledSinceLastCheck(): Promise<boolean> {
    if (this.oomCount < 0 || this.disposed) return false;
    const now = Number.parseInt((await this.controlRun("__af_oom", 10_000).catch(() => "-1")).trim(), 10);
    if (!Number.isFinite(now) || now < 0) return false;
    const killed = now > this.oomCount;
    this.oomCount = now;
    return killed;
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
    const out = await this.controlRun(`__af_read ${ansiC(absolute)} ${max}`);
    const first = out.indexOf("\n");
    const status = first >= 0 ? out.slice(0, first) : out;
    if (status !== "OK") throw this.fileError(file, status, max);
    const second = out.indexOf("\n", first + 1);
    const trailer = second >= 0 ? out.slice(second + 1).trim() : "";
    if (second < 0 || trailer.length > 0) throw this.fileError(file, trailer || "ERR short read", max);
    const data = Buffer.from(out.slice(first + 1, second), "base64");
    if (data.length > max) {
      // Only the first max+1 bytes came over; ask for the real size for the message.
      const size = (await this.controlRun(`stat -L -c %s -- ${ansiC(absolute)}`)).trim();
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
    const out = await this.controlRun(
      `__af_write ${ansiC(this.absolute(file))} ${input.length}`,
      60_000,
      input,
    );
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
    const bridge = this.docker.getNetwork("bridge");
    try {
      if (enabled) await bridge.connect({ Container: this.id });
      else await bridge.disconnect({ Container: this.id, Force: true });
      this.networkConnected = enabled;
    } catch (error) {
      throw new SandboxError(
        `cannot ${enabled ? "connect" : "cut"} the sandbox's network: ${(error as Error).message}`,
        enabled
          ? {
              code: "network_unavailable",
              hint: "Create the sandbox with network: true to connect it later.",
              cause: error,
            }
          : { code: "network_unavailable", cause: error },
      );
    }
  }

  dispose(): Promise<void> {
    this.disposing ??= this.disposeNow();
    return this.disposing;
  }

  private async disposeNow(): Promise<void> {
    this.disposed = true;
    await Promise.all([this.agent.close(), this.control.close()]);
    await removeSandboxResources(this.docker, this.id, this.id);
  }
}

/**
 * Streams `tar -c` of the workspace out of a new exec. Its exit status comes after the stream ends:
 * 0 or 1 (a file changed while read) keep the archive, anything else errors the stream.
 */
async function exportWithTar(
  docker: Docker,
  container: Docker.Container,
  excludeDirs: readonly string[],
): Promise<Readable> {
  const excludes = [".git", ...excludeDirs].map((name) => `--exclude=${name}`);
  const exec = await container.exec({
    ...SANDBOX_PROCESS,
    AttachStdin: false,
    Cmd: ["tar", "-c", "-f", "-", "--hard-dereference", "-C", WORKDIR, ...excludes, "."],
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const archive = new PassThrough();
  let stderr = "";
  const errors = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
      done();
    },
  });
  const tarOut = new PassThrough();
  docker.modem.demuxStream(stream, tarOut, errors);
  tarOut.pipe(archive, { end: false });
  const exitStatus = async (): Promise<number | null> => {
    for (let i = 0; i < 50; i++) {
      const info = await exec.inspect().catch(() => null);
      if (!info) return null;
      if (!info.Running) return info.ExitCode ?? null;
      await new Promise((r) => setTimeout(r, 20));
    }
    return null;
  };
  tarOut.on("end", async () => {
    const status = await exitStatus();
    if (status === 0 || status === 1) return void archive.end();
    const why = stderr.trim() || `tar exited ${status}`;
    archive.destroy(
      new SandboxError(`cannot export the workspace: ${why}`, {
        code: "export_failed",
        hint: "Every file of the repository must be readable (check permissions).",
      }),
    );
  });
  stream.on("end", () => tarOut.end());
  stream.on("close", () => tarOut.end());
  stream.on("error", (error: Error) => archive.destroy(error));
  return archive;
}

/** Removes a sandbox's container (forced) and volume; missing ones are fine. */
export async function removeSandboxResources(
  docker: Docker,
  containerId: string | null,
  volumeName: string | null,
): Promise<void> {
  if (containerId) {
    try {
      await docker.getContainer(containerId).remove({ force: true, v: true });
    } catch (error) {
      if (!isNotFound(error) && !/already in progress/.test((error as Error).message)) throw error;
    }
  }
  if (volumeName) {
    for (let attempt = 0; ; attempt++) {
      try {
        await docker.getVolume(volumeName).remove();
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        // The container's removal may still hold it for a moment.
        if (attempt >= 20) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}
