/**
 * What a Docker sandbox is made of: its container's specification (limits, capabilities, mounts, the
 * main process), the workspace's size, and the checks of the provider's options.
 */
import type Docker from "dockerode";
import type { SandboxLimits, SetupUser } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import { SANDBOX_RICH_IMAGE_NAME } from "../version.js";
import { caBundleMount } from "./ca-trust.js";
import { copyThenSleep } from "./copy.js";
import { isIpv4Cidr } from "./egress.js";
import { WORKDIR } from "./helper-scripts.js";

export const SANDBOX_UID = 1000;
/** Default cap of /workspace (a tmpfs volume: the kernel enforces it). */
export const DEFAULT_WORKSPACE_SIZE = "4g";

export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
export const HOME = "/home/agent";

/** "4g" -> bytes (tmpfs units: powers of 1024); throws on anything else. */
export function parseSize(size: string): number {
  const m = /^([1-9]\d*)([kmg]?)$/i.exec(size);
  if (!m) {
    throw new SandboxError(`invalid workspace size: ${size}`, {
      code: "invalid_argument",
      hint: 'Give a size such as "4g" or "512m".',
    });
  }
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  return Number(m[1]) * unit;
}

/** The operator's size as given ("768m"): tmpfs takes the same units, and an inspected volume shows it. */
function workspaceVolumeOptions(size: string): Record<string, string> {
  return {
    type: "tmpfs",
    device: "tmpfs",
    o: `size=${size},uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0755,nosuid,nodev`,
  };
}

/** A size for messages: "64 MB". */
export function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1024 ** 2)} MB`;
}

export function isNotFound(error: unknown): boolean {
  return (error as { statusCode?: number }).statusCode === 404;
}

/** How every process of the sandbox runs: in the workspace, stdio attached, no TTY. */
export const SANDBOX_PROCESS = {
  AttachStdin: true,
  AttachStdout: true,
  AttachStderr: true,
  Tty: false,
  WorkingDir: WORKDIR,
} as const;

/** The main process: from root (the container's user) to uid 1000 without capabilities, then the copy. */
function mainCommand(keptWorkspace: string | undefined): string[] {
  return [
    "setpriv",
    `--reuid=${SANDBOX_UID}`,
    `--regid=${SANDBOX_UID}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--",
    "bash",
    "-c",
    copyThenSleep(keptWorkspace),
  ];
}

interface ContainerSpecInput {
  name: string;
  image: string;
  labels: Record<string, string>;
  limits: SandboxLimits;
  workspaceSize: string;
  tmpSize: string;
  homeSize: string;
  /** The setup network's name, or undefined for none. */
  network: string | undefined;
  /** A setup sandbox that may be kept: a writable root; root's capabilities when setup runs as root. */
  setupUser?: SetupUser | undefined;
  /** The host's CA bundle to trust (docker/ca-trust.ts), or undefined for the image's own. */
  caBundle?: string | undefined;
  /** A kept environment's image: where it holds the workspace files setup produced, copied in first. */
  keptWorkspace?: string | undefined;
  /** The engine's OCI runtime (`runsc` for gVisor), or undefined for the engine's default (runc). */
  runtime?: string | undefined;
}

/**
 * The bounding set. uid 1000 under no-new-privileges never holds any of it (test/integration/
 * docker/hardening.test.ts); root execs do: the control shell (KILL, SYS_NICE), the egress rules
 * (NET_ADMIN, which setup's own shell drops: sandbox/docker/provider.ts), and root setup (what apt-get and dpkg need: owners, modes, the _apt user).
 */
export function capabilities(network: boolean, setupUser: SetupUser | undefined): string[] {
  const caps = ["KILL", "SETUID", "SETGID", "SYS_NICE"];
  if (network) caps.push("NET_ADMIN");
  if (setupUser === "root") caps.push("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETFCAP");
  return caps;
}

export function containerSpec(input: ContainerSpecInput): Docker.ContainerCreateOptions {
  const { limits, network } = input;
  // The workspace's pages are memory too: processes keep their own limit however full it is.
  const memory = limits.memoryBytes + parseSize(input.workspaceSize);
  return {
    name: input.name,
    Image: input.image,
    // The main process first unpacks the repository from its stdin (streamed while the container
    // starts), says so, then becomes `sleep`. Cheaper than putArchive, which re-mounts and chroots.
    // As the entrypoint, so that no ENTRYPOINT of the image runs before it (as root); nor a HEALTHCHECK.
    Entrypoint: mainCommand(input.keptWorkspace),
    Cmd: [],
    Healthcheck: { Test: ["NONE"] },
    ...SANDBOX_PROCESS,
    User: "0:0",
    OpenStdin: true,
    StdinOnce: true,
    // No sandbox environment here: an exec inherits the container's, and the helper shells must not
    // (a BASH_ENV or LD_PRELOAD in it would run the agent's code in them). The agent's shell gets it.
    Env: [],
    Labels: input.labels,
    HostConfig: {
      ...runtimeOf(input.runtime),
      NetworkMode: network ?? "none",
      CapDrop: ["ALL"],
      CapAdd: capabilities(network !== undefined, input.setupUser),
      SecurityOpt: ["no-new-privileges"],
      ...(network ? { Sysctls: { "net.ipv6.conf.all.disable_ipv6": "1" } } : {}),
      Init: true,
      // Only a setup sandbox writes its root: what it installs is committed as the kept environment.
      ReadonlyRootfs: input.setupUser === undefined,
      // exec: Docker's default for a tmpfs is noexec, and toolchains run what they build there (`go test`
      // runs its binary from /tmp; pip --user, cargo install, go install put tools under $HOME). The
      // workspace runs the agent's code anyway, so noexec would protect nothing.
      Tmpfs: {
        "/tmp": `rw,exec,nosuid,nodev,size=${input.tmpSize},mode=1777`,
        [HOME]: `rw,exec,nosuid,nodev,size=${input.homeSize},uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0755`,
      },
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: limits.pids,
      Mounts: [
        {
          Type: "volume",
          Source: input.name,
          Target: WORKDIR,
          VolumeOptions: {
            NoCopy: false,
            Labels: input.labels,
            DriverConfig: { Name: "local", Options: workspaceVolumeOptions(input.workspaceSize) },
          },
        },
        ...(input.caBundle ? [caBundleMount(input.caBundle)] : []),
      ],
      LogConfig: { Type: "none", Config: {} },
    },
  };
}

/** `HostConfig.Runtime` when the operator chose one: absent, the engine's default runtime runs it. */
export function runtimeOf(runtime: string | undefined): { Runtime?: string } {
  return runtime ? { Runtime: runtime } : {};
}

export function imageMissing(image: string, cause?: unknown): SandboxError {
  return new SandboxError(`the sandbox image ${image} is not on this worker's Docker engine`, {
    code: "image_missing",
    hint: "The worker never pulls an image: the operator pulls or builds the allowed images on the worker host (`docker pull IMAGE`).",
    cause,
  });
}

export function createError(image: string, error: unknown): SandboxError {
  if (isNotFound(error)) {
    return new SandboxError(`the sandbox image ${image} is missing`, {
      code: "image_missing",
      hint: image.startsWith(`${SANDBOX_RICH_IMAGE_NAME}:`)
        ? "Build it with `npm run sandbox:image:rich` (sandbox/image/build.sh --rich)."
        : "Build it with `npm run sandbox:image` (sandbox/image/build.sh).",
      cause: error,
    });
  }
  return new SandboxError(`cannot create a sandbox container: ${(error as Error).message}`, {
    code: "docker_unavailable",
    retryable: true,
    cause: error,
  });
}

export function checkCidrs(list: string[] | undefined, what: string): string[] {
  for (const cidr of list ?? []) {
    if (!isIpv4Cidr(cidr)) {
      throw new SandboxError(`invalid CIDR in the setup network's ${what} list: ${cidr}`, {
        code: "invalid_argument",
        hint: 'Give IPv4 addresses or ranges such as "10.1.2.3/32" or "10.20.0.0/16".',
      });
    }
  }
  return list ?? [];
}

export function asCidr(address: string): string {
  return address.includes("/") ? address : `${address}/32`;
}
