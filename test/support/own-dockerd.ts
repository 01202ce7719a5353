/**
 * A Docker engine of the test's own (its socket, data root, exec root and pidfile in a temp dir; no
 * bridge and no iptables, in its own network namespace: a dockerd started with `--bridge=none` deletes
 * the host's docker0, which the shared engine's builds and default-network containers need), so a test can
 * restart it. Sandboxes need no network (`--network none`); the sandbox image is copied in from the
 * shared engine (`docker save | docker load`), which is slow: load it once per file.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Docker from "dockerode";
import { type DockerTls, forwardTcp, type TcpForward } from "./docker-tls.js";

const DOCKER0 = "/sys/class/net/docker0";
/** The TCP port inside the engine's own network namespace (Docker's TLS port). */
const ENGINE_TLS_PORT = 2376;

/**
 * gVisor as docs/operating.md configures it: the ptrace platform (no KVM here) and no network of its own
 * (runsc cannot take over a network namespace Docker made; sandboxes have none anyway).
 */
export const RUNSC_RUNTIME = { path: "/usr/bin/runsc", runtimeArgs: ["--platform=ptrace", "--network=none"] };

export interface OwnDockerdOptions {
  /** Runtimes beside runc, as daemon.json's "runtimes" names them. */
  runtimes?: Record<string, { path: string; runtimeArgs?: string[] }>;
  /**
   * How long a stop waits for the containers to end before it kills them (dockerd's --shutdown-timeout,
   * 15 s by default; a sandbox's first process ignores SIGTERM, so a stop with one running takes that
   * long).
   */
  shutdownTimeoutSeconds?: number;
  /**
   * An image store to start with (engineTemplate in sandbox-engine.ts): its files are hard-linked into
   * this engine's data root, which takes a second where `docker save | docker load` takes ten or more.
   */
  imagesFrom?: string;
  /**
   * Also listen on TCP with TLS (`--tlsverify`: a client certificate of the CA is required), as a remote
   * engine does: certificates made at test time (docker-tls.ts), reached at tcp://127.0.0.1:PORT.
   */
  tls?: DockerTls;
}

/**
 * `cp -al`: the directories made anew, the files hard-linked. Safe for an image store only: overlay2
 * never writes a lower layer's file (a container's change is copied up into its own layer), and the
 * engine replaces its image metadata by rename, never in place.
 */
async function linkTree(from: string, to: string): Promise<void> {
  const cp = spawn("cp", ["-al", from, to], { stdio: ["ignore", "ignore", "inherit"] });
  const [code] = await once(cp, "exit");
  if (code !== 0) throw new Error(`cp -al ${from} ${to} failed (${code})`);
}

export class OwnDockerd {
  private child: ChildProcess | undefined;
  private forward: TcpForward | undefined;
  /** Its TLS port here, kept across restarts: a worker configured with it reaches it again. */
  private tcpPort = 0;
  private constructor(
    readonly dir: string,
    private readonly tls: DockerTls | undefined,
    private readonly shutdownTimeoutSeconds: number | undefined,
  ) {}

  static async start(options: OwnDockerdOptions = {}): Promise<OwnDockerd> {
    // Short: a unix socket path is limited to 108 bytes. Its containers' mounts show the name (the
    // replay sample-median-pause-private-engine.jsonl pauses only on such an engine).
    const engine = new OwnDockerd(
      await mkdtemp(join(tmpdir(), "af-dkd-")),
      options.tls,
      options.shutdownTimeoutSeconds,
    );
    const config = join(engine.dir, "daemon.json");
    await writeFile(config, JSON.stringify({ runtimes: options.runtimes ?? {} }));
    if (options.imagesFrom) await linkTree(options.imagesFrom, join(engine.dir, "data"));
    await engine.start();
    return engine;
  }

  /** DOCKER_HOST for clients (dockerode reads it, as the docker CLI does). */
  get host(): string {
    return `unix://${join(this.dir, "docker.sock")}`;
  }

  get docker(): Docker {
    return new Docker({ socketPath: join(this.dir, "docker.sock") });
  }

  async start(): Promise<void> {
    const hadDocker0 = existsSync(DOCKER0);
    const child = spawn(
      "unshare",
      [
        "--net",
        "dockerd",
        `--host=${this.host}`,
        `--data-root=${join(this.dir, "data")}`,
        `--exec-root=${join(this.dir, "exec")}`,
        `--pidfile=${join(this.dir, "docker.pid")}`,
        "--bridge=none",
        "--iptables=false",
        "--ip6tables=false",
        `--config-file=${join(this.dir, "daemon.json")}`,
        ...(this.shutdownTimeoutSeconds === undefined
          ? []
          : [`--shutdown-timeout=${this.shutdownTimeoutSeconds}`]),
        ...(this.tls
          ? [
              "--tlsverify",
              `--tlscacert=${this.tls.ca}`,
              `--tlscert=${this.tls.serverCert}`,
              `--tlskey=${this.tls.serverKey}`,
              `--host=tcp://127.0.0.1:${ENGINE_TLS_PORT}`,
            ]
          : []),
      ],
      { stdio: "ignore" },
    );
    this.child = child;
    for (let i = 0; i < 300; i++) {
      if (child.exitCode !== null) throw new Error(`dockerd exited ${child.exitCode} (data in ${this.dir})`);
      if (
        await this.docker.ping().then(
          () => true,
          () => false,
        )
      ) {
        if (hadDocker0 && !existsSync(DOCKER0))
          throw new Error(
            "the private dockerd deleted the host's docker0: it must run in its own network namespace",
          );
        // Its TCP port is in its own network namespace: forwarded, bytes only (TLS stays end to end).
        if (this.tls && child.pid) {
          this.forward = await forwardTcp(child.pid, this.dir, ENGINE_TLS_PORT, this.tcpPort);
          this.tcpPort = this.forward.port;
        }
        return;
      }
      await sleep(100);
    }
    throw new Error(`dockerd at ${this.host} did not answer within 30 s`);
  }

  /** DOCKER_HOST of its TLS port, on this host's loopback (the same after a restart); only with the `tls` option. */
  get tcpHost(): string {
    if (!this.tcpPort) throw new Error("this dockerd was started without tls");
    return `tcp://127.0.0.1:${this.tcpPort}`;
  }

  /**
   * Its TLS port stops answering, as a host that vanished from the network: nothing refuses, nothing
   * answers, the connections open stay open (docker-tls.ts). `stop()` or `restart()` ends it.
   */
  silenceTcp(): void {
    if (!this.forward) throw new Error("this dockerd was started without tls");
    this.forward.silence();
  }

  /** SIGTERM, as `systemctl restart docker` stops it: its containers are stopped with it. */
  async stop(): Promise<void> {
    await this.forward?.close();
    this.forward = undefined;
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Whether a process of a sandbox container here runs `command` (seen in its processes). */
  async running(command: string): Promise<boolean> {
    const docker = this.docker;
    const containers = await docker.listContainers({ filters: { label: ["agent-fix.job"] } });
    for (const container of containers) {
      const top = await docker
        .getContainer(container.Id)
        .top()
        .catch(() => undefined); // gone meanwhile
      if (top?.Processes?.some((p: string[]) => p.join(" ").includes(command))) return true;
    }
    return false;
  }

  /** Copies `image` from the shared engine into this one; returns the milliseconds it took. */
  async loadImage(image: string): Promise<number> {
    const started = Date.now();
    const save = spawn("docker", ["save", image], { stdio: ["ignore", "pipe", "inherit"] });
    const load = spawn("docker", ["-H", this.host, "load", "-q"], { stdio: ["pipe", "ignore", "inherit"] });
    save.stdout.pipe(load.stdin);
    const [[saved], [loaded]] = await Promise.all([once(save, "exit"), once(load, "exit")]);
    if (saved !== 0 || loaded !== 0)
      throw new Error(`docker save | load of ${image} failed (${saved}, ${loaded})`);
    return Date.now() - started;
  }

  async remove(): Promise<void> {
    await this.stop().catch(() => this.child?.kill("SIGKILL"));
    await rm(this.dir, { recursive: true, force: true });
  }
}
