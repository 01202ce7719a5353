/**
 * The Sandbox contract over the Docker Engine API (dockerode). One container per sandbox, hardened:
 * no network (setup's, when asked for at start: sandbox/egress.ts), no-new-privileges, every process of
 * the agent as uid 1000 without capabilities, memory/CPU/pid limits, an init process, a read-only root
 * with tmpfs /tmp and $HOME, and the repository on a size-limited tmpfs volume at /workspace. Three
 * persistent shells are attached over the API (~1.5 ms a command instead of ~81 ms for an Engine API
 * exec): the agent's; a root control shell for killing and probes, out of the agent's reach; and a file
 * shell for reads and writes with the agent's permissions (sandbox/docker-scripts.ts says why neither
 * can be driven by the agent). The container's own user is root only so that root execs keep the few
 * capabilities of its bounding set (KILL, SETUID, SETGID, SYS_NICE; NET_ADMIN with a network): its main process
 * drops to uid 1000 at once.
 */

import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { type Duplex, PassThrough, type Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import Docker from "dockerode";
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
import { buildRepoImage } from "./docker-build.js";
import { caTrustEnv, checkCaBundle } from "./docker-ca.js";
import { copyIn } from "./docker-copy.js";
import {
  DockerPreparedEnvironments,
  KEPT_WORKSPACE,
  type KeptEnvironmentsOptions,
} from "./docker-environments.js";
import {
  derivedImage,
  type ImageFitness,
  inspectForeignImage,
  probeImage,
  unsuitableImage,
} from "./docker-image.js";
import { CONTROL_INIT, FILE_INIT, PRIVATE_BIN, WORKDIR } from "./docker-scripts.js";
import {
  asCidr,
  checkCidrs,
  containerSpec,
  createError,
  DEFAULT_WORKSPACE_SIZE,
  HOME,
  isNotFound,
  megabytes,
  parseSize,
  SANDBOX_PATH,
  SANDBOX_PROCESS,
  SANDBOX_UID,
} from "./docker-spec.js";
import {
  applyEgressRules,
  DEFAULT_SETUP_NETWORK,
  egressRules,
  ensureSetupNetwork,
  hostAddresses,
  hostResolvers,
} from "./egress.js";
import { containerDown } from "./engine-fault.js";
import { ansiC, type ShellProcess, ShellSession } from "./shell-session.js";
import { SANDBOX_IMAGE, SANDBOX_IMAGE_NAME, SANDBOX_RICH_IMAGE_NAME } from "./version.js";

export const LABEL = {
  /** Present on every container and volume this driver makes. */
  sandbox: "agent-fix.sandbox",
  job: "agent-fix.job",
  worker: "agent-fix.worker",
  /** Milliseconds since the epoch. */
  created: "agent-fix.created",
  image: "agent-fix.image",
} as const;
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
   * Size limit of /workspace, e.g. "4g" (default DEFAULT_WORKSPACE_SIZE). The workspace is a tmpfs
   * volume of that size: on overlay2 over ext4 (this engine) neither `--storage-opt size` nor a disk
   * volume can cap a size, while a full tmpfs fails the write (ENOSPC) at once. Its pages are memory,
   * so the container's memory limit is raised by this size: processes keep their own limit whatever
   * the workspace holds. Unpacking a repository is also ~20 times faster than into a disk volume.
   */
  workspaceSize?: string;
  /** The former name of workspaceSize; workspaceSize wins. */
  workspaceTmpfsSize?: string;
  /** Keep setup's result for later runs (sandbox/docker-environments.ts); off when absent. */
  keptEnvironments?: KeptEnvironmentsOptions;
  /** Setup's network (sandbox/egress.ts). */
  setupNetwork?: {
    /** Docker network to create and use (default agent-fix-setup). */
    name?: string;
    /** CIDRs reachable although private (a private registry or proxy). */
    allow?: string[];
    /** CIDRs unreachable on top of the private ranges (the host's public address, when the worker runs in a container). */
    deny?: string[];
  };
  /**
   * A PEM bundle on this host of the CA certificates sandboxes trust (a TLS-inspecting proxy's among
   * them), mounted read-only, for npm, pip, git, curl and the rest (docker-ca.ts); default: the image's own.
   */
  caBundle?: string;
}

const AGENT_USER = `${SANDBOX_UID}:${SANDBOX_UID}`;

/** Who a shell runs as, with what: the helper shells get a fixed environment (BASH_ENV and the like
 * of the sandbox's environment could otherwise run code in them). */
interface ShellIdentity {
  user: string;
  cmd: string[];
  env: string[];
}

function helperShells(): { control: ShellIdentity; files: ShellIdentity } {
  const locale = ["LANG=C.UTF-8", "LC_ALL=C.UTF-8"];
  return {
    control: {
      user: "0:0",
      // Ahead of everything the agent runs: under a fork bomb, a shell of nice 0 gets one time slice in
      // hundreds and takes seconds to read the line that stops the bomb.
      cmd: ["nice", "-n", "-20", "bash", "--noprofile", "--norc"],
      env: [`PATH=${SANDBOX_PATH}`, ...locale],
    },
    files: {
      user: AGENT_USER,
      cmd: [`${PRIVATE_BIN}/bash`, "--noprofile", "--norc"],
      env: [`PATH=${PRIVATE_BIN}`, ...locale],
    },
  };
}

async function attachShell(
  docker: Docker,
  container: Docker.Container,
  identity: ShellIdentity,
): Promise<ShellProcess> {
  const exec = await container.exec({
    ...SANDBOX_PROCESS,
    User: identity.user,
    Cmd: identity.cmd,
    Env: identity.env,
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
          return resolve(null); // the exec is gone with its container: exit code unknown
        }
        await sleep(20);
      }
      resolve(null);
    };
    stream.on("end", finish);
    stream.on("close", finish);
    stream.on("error", finish);
  });
  return { stdin: stream, output, exited, destroy: () => stream.destroy() };
}

export class DockerSandboxProvider implements SandboxProvider {
  readonly driver = "docker" as const;
  readonly docker: Docker;
  readonly image: string;
  readonly workerId: string;
  readonly workspaceSize: string;
  readonly workspaceBytes: number;
  readonly setupNetwork: string;
  /** The CA bundle's real path on the host, when the operator gave one. */
  readonly caBundle: string | undefined;
  private readonly allow: string[];
  private readonly deny: string[];
  private networkReady: Promise<string[]> | undefined;
  readonly environments: DockerPreparedEnvironments | undefined;
  /** Foreign images made fit for the sandbox, by image id: the image to run and what it lacks. */
  private readonly prepared = new Map<string, Promise<{ run: string; fitness: ImageFitness }>>();
  /** Repository images built, by what built them: the image's id. */
  private readonly built = new Map<string, Promise<string>>();

  constructor(private readonly options: DockerSandboxProviderOptions = {}) {
    this.workspaceSize = options.workspaceSize ?? options.workspaceTmpfsSize ?? DEFAULT_WORKSPACE_SIZE;
    this.workspaceBytes = parseSize(this.workspaceSize);
    this.allow = checkCidrs(options.setupNetwork?.allow, "allow");
    this.deny = checkCidrs(options.setupNetwork?.deny, "deny");
    this.setupNetwork = options.setupNetwork?.name ?? DEFAULT_SETUP_NETWORK;
    this.docker = options.docker ?? new Docker();
    this.image = options.image ?? SANDBOX_IMAGE;
    this.workerId = options.workerId ?? defaultWorkerId();
    this.environments = options.keptEnvironments
      ? new DockerPreparedEnvironments(this.docker, this.image, options.keptEnvironments)
      : undefined;
    this.caBundle = options.caBundle === undefined ? undefined : checkCaBundle(options.caBundle);
  }

  /** The setup network's subnet and gateway, the network created on first use. */
  private networkAddresses(): Promise<string[]> {
    this.networkReady ??= ensureSetupNetwork(this.docker, this.setupNetwork).catch((error) => {
      this.networkReady = undefined;
      throw new SandboxError(
        `cannot prepare the setup network ${this.setupNetwork}: ${(error as Error).message}`,
        {
          code: "network_unavailable",
          retryable: true,
          cause: error,
        },
      );
    });
    return this.networkReady;
  }

  /** agent-fix's own images (the provider's default, the slim, the rich and the kept ones) run as they are. */
  private isOwnImage(image: string): boolean {
    const name = image.replace(/:[^/:]*$/, "");
    if (this.environments?.owns(image)) return true;
    return image === this.image || name === SANDBOX_IMAGE_NAME || name === SANDBOX_RICH_IMAGE_NAME;
  }

  /** The image a sandbox of `image` runs: itself when agent-fix's own, else its prepared derivative. */
  private async runnableImage(image: string, network: boolean): Promise<string> {
    if (this.isOwnImage(image)) return image;
    // Inspected each time and kept by id: an image pulled or built again under the same name is new.
    const info = await inspectForeignImage(this.docker, image);
    let prepared = this.prepared.get(info.Id);
    if (!prepared) {
      prepared = (async () => {
        const fitness = await probeImage(this.docker, image, info.Id);
        if (fitness.missing.length > 0) throw unsuitableImage(image, fitness.missing, false);
        return { run: await derivedImage(this.docker, image, info.Id), fitness };
      })();
      // A failure is not kept: the operator may fix the image meanwhile.
      prepared.catch(() => this.prepared.delete(info.Id));
      this.prepared.set(info.Id, prepared);
    }
    const { run, fitness } = await prepared;
    if (network && fitness.missingForNetwork.length > 0)
      throw unsuitableImage(image, fitness.missingForNetwork, true);
    return run;
  }

  /** The id of the repository's image, built on first use (and again after a failure). */
  repoImage(build: NonNullable<SandboxCreateOptions["imageBuild"]>): Promise<string> {
    const key = JSON.stringify(build);
    let id = this.built.get(key);
    if (!id) {
      id = buildRepoImage(this.docker, build);
      id.catch(() => this.built.delete(key));
      this.built.set(key, id);
    }
    return id;
  }

  async create(options: SandboxCreateOptions): Promise<Sandbox> {
    const name = `agent-fix-${randomBytes(6).toString("hex")}`;
    const image = options.imageBuild
      ? await this.repoImage(options.imageBuild)
      : (options.image ?? this.image);
    const labels: Record<string, string> = {
      [LABEL.sandbox]: "1",
      [LABEL.job]: options.jobId,
      [LABEL.worker]: this.workerId,
      [LABEL.created]: String(Date.now()),
      [LABEL.image]: image,
    };
    const network = options.network === true ? this.setupNetwork : undefined;
    const runImage = await this.runnableImage(image, network !== undefined);
    const networkAddresses = network ? await this.networkAddresses() : [];
    const began = performance.now();
    const phases: Record<string, number> = {};
    const mark = (phase: string) => {
      phases[phase] = Math.round((performance.now() - began) * 10) / 10;
    };
    const fixed = safeEnv(HOME, SANDBOX_PATH);
    const env = sandboxEnv(this.caBundle ? { ...fixed, ...caTrustEnv() } : fixed, options.env);
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer(
        containerSpec({
          name,
          image: runImage,
          labels,
          limits: { ...DEFAULT_LIMITS, ...this.options.limits, ...options.limits },
          workspaceSize: this.workspaceSize,
          tmpSize: this.options.tmpfsSize?.tmp ?? "1g",
          homeSize: this.options.tmpfsSize?.home ?? "512m",
          network,
          setupUser: options.setup?.user,
          caBundle: this.caBundle,
          keptWorkspace: this.environments?.owns(image) ? KEPT_WORKSPACE : undefined,
        }),
      );
    } catch (error) {
      throw createError(image, error);
    }
    mark("container_created");
    const sandbox = new DockerSandbox(this.docker, container, {
      id: name,
      image,
      network: network ?? null,
      env: envList(env),
      rootShell: options.setup?.user === "root",
      settings: sessionSettings(this.options, options),
      workspaceBytes: this.workspaceBytes,
    });
    try {
      const copied = copyIn(this.docker, container, options.sourceDir).then(() => mark("copied"));
      await container.start();
      mark("started");
      // Before any command of setup can run: the rules of its network, in the sandbox's namespace.
      const rules = network
        ? applyEgressRules(
            container,
            egressRules({
              allow: this.allow,
              deny: [...networkAddresses.map(asCidr), ...hostAddresses(), ...this.deny],
              dns: hostResolvers(),
            }),
          ).then(() => mark("egress_rules"))
        : undefined;
      await Promise.all([copied, sandbox.start(mark), rules]);
      mark("ready");
      sandbox.startupPhases = phases;
      return sandbox;
    } catch (error) {
      // The start's error is the one to report; a container left behind is the reaper's.
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

interface DockerSandboxInit {
  id: string;
  image: string;
  /** The setup network's name while connected (or connectable), null without. */
  network: string | null;
  env: string[];
  /** Setup as root: the commands' shell is root's, without NET_ADMIN (the egress rules stay). */
  rootShell: boolean;
  settings: SessionSandboxSettings;
  workspaceBytes: number;
}

/** Root setup's shell: NET_ADMIN leaves the bounding set first, so root cannot undo the egress rules. */
const ROOT_SETUP_SHELL = [
  "setpriv",
  "--bounding-set=-net_admin",
  "--inh-caps=-all",
  "--",
  "bash",
  "--noprofile",
  "--norc",
];

export class DockerSandbox extends SessionSandbox {
  readonly driver = "docker" as const;
  readonly workdir = WORKDIR;
  readonly id: string;
  readonly image: string;
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
    this.networkName = init.network;
    this.networkConnected = init.network !== null;
    this.workspaceBytes = init.workspaceBytes;
    const helpers = helperShells();
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

  /** Attaches the three shells at once (each costs an exec create and start over the API). */
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
    const files = this.files.start().then(() => mark("file_shell"));
    const agent = this.agent.start().then(() => mark("agent_shell"));
    await Promise.all([control, files, agent]);
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
    // The agent's uid: root here holds no capability to read the agent's files, and needs none.
    User: AGENT_USER,
    Env: [`PATH=${SANDBOX_PATH}`, "LANG=C.UTF-8"],
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
      const info = await exec.inspect().catch(() => null); // gone: exit status unknown
      if (!info) return null;
      if (!info.Running) return info.ExitCode ?? null;
      await sleep(20);
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
        await sleep(100);
      }
    }
  }
}
