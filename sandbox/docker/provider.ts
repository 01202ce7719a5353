/**
 * The Sandbox contract over the Docker Engine API (dockerode). One container per sandbox, hardened:
 * no network (setup's, when asked for at start: sandbox/docker/egress.ts), no-new-privileges, every process of
 * the agent as uid 1000 without capabilities, memory/CPU/pid limits, an init process, a read-only root
 * with tmpfs /tmp and $HOME, and the repository on a size-limited tmpfs volume at /workspace. Three
 * persistent shells are attached over the API (~1.5 ms a command instead of ~81 ms for an Engine API
 * exec): the agent's; a root control shell for killing and probes, out of the agent's reach; and a file
 * shell for reads and writes with the agent's permissions (sandbox/docker/helper-scripts.ts says why neither
 * can be driven by the agent). The container's own user is root only so that root execs keep the few
 * capabilities of its bounding set (KILL, SETUID, SETGID, SYS_NICE; NET_ADMIN with a network): its main process
 * drops to uid 1000 at once.
 */

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import os from "node:os";
import Docker from "dockerode";
import type {
  ImageToolchains,
  Sandbox,
  SandboxCreateOptions,
  SandboxLimits,
  SandboxOrigin,
  SandboxProvider,
} from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import {
  DEFAULT_LIMITS,
  envList,
  type SessionSandboxSettings,
  safeEnv,
  sandboxEnv,
  sessionSettings,
  withWorkspaceEnv,
} from "../session-sandbox.js";
import { SANDBOX_IMAGE } from "../version.js";
import { caTrustEnv, checkCaBundle, javaTrustEnv, javaTrustStore } from "./ca-trust.js";
import {
  DEFAULT_SETUP_NETWORK,
  egressRules,
  ensureSetupNetwork,
  hostAddresses,
  hostResolvers,
} from "./egress.js";
import { WORKDIR } from "./helper-scripts.js";
import { SandboxImages } from "./images.js";
import {
  DockerPreparedEnvironments,
  KEPT_WORKSPACE,
  type KeptEnvironmentsOptions,
} from "./kept-environments.js";
import { DEFAULT_BUILD_TIMEOUT_MS } from "./repo-build.js";
import {
  asCidr,
  checkCidrs,
  containerSpec,
  DEFAULT_WORKSPACE_SIZE,
  HOME,
  parseSize,
  SANDBOX_PATH,
} from "./spec.js";
import {
  fillStandby,
  NO_STANDBY,
  STANDBY_JOB,
  STANDBY_PER_KIND,
  type StandbySettings,
  standbyFingerprint,
} from "./standby.js";
import { StandbyPool } from "./standby-pool.js";
import { type SandboxPlan, type StartedSandbox, startSandbox } from "./start.js";
import { ImageToolchainProbe } from "./toolchains.js";

export type { DockerSandbox } from "./sandbox.js";

/** gVisor's runtime as docs/operating.md names it in daemon.json: its file shell runs the image's binaries. */
const GVISOR_RUNTIME = "runsc";

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
  /** Keep setup's result for later runs (sandbox/docker/kept-environments.ts); off when absent. */
  keptEnvironments?: KeptEnvironmentsOptions;
  /** Setup's network (sandbox/docker/egress.ts). */
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
   * them), mounted read-only, for npm, pip, git, curl and the rest (docker/ca-trust.ts); default: the image's own.
   */
  caBundle?: string;
  /** Standby sandboxes, started ahead of the sandboxes asked for (sandbox/docker/standby.ts); none by default. */
  standby?: StandbySettings;
  /** The longest a repository's image build runs, all steps together (default 15 minutes). */
  imageBuildTimeoutMs?: number;
  /**
   * The engine's OCI runtime for the sandboxes (`runsc`: gVisor), default the engine's own (runc). Every
   * sandbox and image build step gets it except a setup sandbox with network, which stays on the default:
   * runsc runs with `--network=none` here (it cannot join a network namespace it did not make), and the
   * egress rules are iptables in the container's namespace (sandbox/docker/egress.ts).
   */
  runtime?: string;
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
  /** The bundle as the keystore Java's tools read, written into each sandbox with network. */
  private readonly javaKeystore: Buffer | undefined;
  private readonly allow: string[];
  private readonly deny: string[];
  private networkReady: Promise<string[]> | undefined;
  readonly environments: DockerPreparedEnvironments | undefined;
  private readonly images: SandboxImages;
  private readonly standbys: StandbyPool<StartedSandbox>;
  private readonly probe: ImageToolchainProbe;

  constructor(private readonly options: DockerSandboxProviderOptions = {}) {
    this.workspaceSize = options.workspaceSize ?? DEFAULT_WORKSPACE_SIZE;
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
    this.javaKeystore = this.caBundle ? javaTrustStore(readFileSync(this.caBundle, "utf8")) : undefined;
    this.images = new SandboxImages(this.docker, this.image, this.environments, {
      limits: { ...DEFAULT_LIMITS, ...options.limits },
      timeoutMs: options.imageBuildTimeoutMs ?? DEFAULT_BUILD_TIMEOUT_MS,
      runtime: options.runtime,
      // The sandbox's labels: the reaper removes a build's container its dead worker left.
      containerLabels: {
        [LABEL.sandbox]: "1",
        [LABEL.job]: "image-build",
        [LABEL.worker]: this.workerId,
        [LABEL.created]: String(Date.now()),
      },
    });
    this.standbys = new StandbyPool({ perKind: STANDBY_PER_KIND, ...(options.standby ?? NO_STANDBY) });
    this.probe = new ImageToolchainProbe(this.docker);
  }

  /** The toolchain versions `image` (the default when undefined) provides, probed once per image id. */
  toolchains(image: string | undefined): Promise<ImageToolchains> {
    return this.probe.versions(image ?? this.image);
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

  /** The id of the repository's image, built on first use (and again after a failure). */
  repoImage(build: NonNullable<SandboxCreateOptions["imageBuild"]>, signal?: AbortSignal): Promise<string> {
    return this.images.build(build, signal);
  }

  async create(options: SandboxCreateOptions): Promise<Sandbox> {
    const plan = await this.plan(options);
    const fingerprint = await this.standbyFingerprint(options, plan);
    const refill = () => {
      if (!fingerprint) return;
      this.standbys.refill(fingerprint, async () =>
        startSandbox(this.docker, await this.plan({ ...options, jobId: STANDBY_JOB }), null),
      );
    };
    const standby = fingerprint ? await this.standbys.take(fingerprint) : null;
    const filled = standby ? await fillStandby(standby, options.sourceDir) : null;
    if (filled) {
      refill();
      return filled;
    }
    const { sandbox } = await startSandbox(this.docker, plan, options.sourceDir);
    refill();
    return sandbox;
  }

  /**
   * Removes the standby sandboxes and stops the image builds in progress; a create() after it starts none.
   * Then the engine's connections are let go (an ssh:// engine's SSH sessions: ssh-http-agent.ts).
   */
  async close(): Promise<void> {
    this.images.close();
    await this.standbys.close();
    (this.docker.modem as { agent?: { destroy(): void } }).agent?.destroy();
  }

  /**
   * The standby fingerprint of a sandbox a standby may serve: one without network or setup of a kept
   * environment's image, or (`sharedImages`) of any image not built from a repository's files (the
   * default, one the operator allows); null for any other. A standby of a shared image holds nothing of any repository until it is taken; one of
   * a kept environment holds that repository's kept files, and only its very image id asks for it.
   */
  private async standbyFingerprint(options: SandboxCreateOptions, plan: SandboxPlan): Promise<string | null> {
    if (!this.standbys.enabled || options.network || options.setup || options.imageBuild) return null;
    const image = options.image ?? this.image;
    if (!this.options.standby?.sharedImages && !this.environments?.owns(image)) return null;
    const info = await this.docker
      .getImage(image)
      .inspect()
      .catch(() => null); // missing: the create below says so
    if (!info) return null;
    return standbyFingerprint({
      image,
      imageId: info.Id,
      limits: this.limitsOf(options),
      env: plan.env,
      settings: plan.settings,
    });
  }

  private limitsOf(options: SandboxCreateOptions): SandboxLimits {
    return { ...DEFAULT_LIMITS, ...this.options.limits, ...options.limits };
  }

  /** Everything a sandbox of `options` is made of: its container's spec, its shells' environment. */
  private async plan(options: SandboxCreateOptions): Promise<SandboxPlan> {
    const name = `agent-fix-${randomBytes(6).toString("hex")}`;
    const image = options.imageBuild
      ? await this.repoImage(options.imageBuild, options.signal)
      : (options.image ?? this.image);
    const labels: Record<string, string> = {
      [LABEL.sandbox]: "1",
      [LABEL.job]: options.jobId,
      [LABEL.worker]: this.workerId,
      [LABEL.created]: String(Date.now()),
      [LABEL.image]: image,
    };
    const network = options.network === true ? this.setupNetwork : undefined;
    const runImage = await this.images.runnable(image, network !== undefined);
    // Inspected while the container is created (sandbox/docker/start.ts), not before.
    const origin = this.originOf(image);
    origin.catch(() => undefined); // read there
    const fixed = safeEnv(HOME, SANDBOX_PATH);
    const trust = this.caBundle ? { ...caTrustEnv(), ...(network ? javaTrustEnv() : {}) } : {};
    const env = withWorkspaceEnv(
      sandboxEnv({ ...fixed, ...trust }, options.env),
      options.workspaceEnv,
      WORKDIR,
    );
    const runtime = network ? undefined : this.options.runtime;
    return {
      name,
      image,
      origin,
      fileShellBinaries: runtime === GVISOR_RUNTIME ? "image" : "execute-only",
      spec: containerSpec({
        name,
        image: runImage,
        labels,
        limits: this.limitsOf(options),
        workspaceSize: this.workspaceSize,
        tmpSize: this.options.tmpfsSize?.tmp ?? "1g",
        homeSize: this.options.tmpfsSize?.home ?? "512m",
        network,
        setupUser: options.setup?.user,
        caBundle: this.caBundle,
        keptWorkspace: this.environments?.owns(image) ? KEPT_WORKSPACE : undefined,
        runtime,
      }),
      network: network ?? null,
      egressRules: network ? await this.egressRulesOf() : undefined,
      javaTrustStore: network ? this.javaKeystore : undefined,
      env: envList(env),
      rootShell: options.setup?.user === "root",
      settings: sessionSettings(this.options, options),
      workspaceBytes: this.workspaceBytes,
    };
  }

  /** Where a sandbox of `image` comes from: a kept environment's base image, or the image itself. */
  private async originOf(image: string): Promise<SandboxOrigin> {
    if (this.environments?.owns(image)) return this.environments.origin(image);
    // Missing: the container's creation says so, in its own words.
    const info = await this.docker
      .getImage(image)
      .inspect()
      .catch(() => null);
    return { image, imageId: info?.Id ?? null, kept: null };
  }

  /** The setup network's egress rules (the network made on first use). */
  private async egressRulesOf(): Promise<string> {
    const networkAddresses = await this.networkAddresses();
    return egressRules({
      allow: this.allow,
      deny: [...networkAddresses.map(asCidr), ...hostAddresses(), ...this.deny],
      dns: hostResolvers(),
    });
  }
}
