/**
 * An image that is not agent-fix's own (a repository's `sandbox.image` or devcontainer image, which the
 * operator allowed) made fit for the sandbox without any network: its tools are probed in a container
 * as locked down as a sandbox, what is missing refuses the image naming it, and what the worker adds
 * (the execute-only helpers of the file shell, git's identity, /workspace) goes into a derived image
 * built with no network from the image's own binaries. The sandbox's hardening does not depend on the
 * image: user, capabilities, read-only root and network are set on the container (docker/spec.ts).
 */
import { createHash } from "node:crypto";
import type Docker from "dockerode";
import { pack } from "tar-stream";
import { SandboxError } from "../../src/shared/errors.js";
import { buildImage } from "./build.js";
import { PRIVATE_BIN, WORKDIR } from "./helper-scripts.js";
import { imageMissing, isNotFound } from "./spec.js";

/** What the worker runs in every sandbox: its shells, the copy in and out, the ACI's searches. */
const REQUIRED_TOOLS = [
  "bash",
  "setpriv",
  "tar",
  "sleep",
  "nice",
  "git",
  "rg",
  "head",
  "base64",
  "mkdir",
  "realpath",
  "stat",
  "cat",
  "df",
  "find",
  "sort",
] as const;
/** Setup's egress rules are set with it in the sandbox's namespace (egress.ts). */
const NETWORK_TOOLS = ["iptables"] as const;
const HELPERS = ["bash", "head", "base64", "mkdir", "realpath", "stat", "cat"];
const DERIVED_IMAGE_NAME = "agent-fix-derived";
export const DERIVED_FROM_LABEL = "agent-fix.derived-from";

/** What a probe found in an image. */
export interface ImageFitness {
  /** The image's id (sha256:...), which the derived image is keyed by. */
  id: string;
  missing: string[];
  missingForNetwork: string[];
}

/** Refuses images whose configuration would undo part of the sandbox: a VOLUME is writable beside the read-only root. */
export async function inspectForeignImage(docker: Docker, image: string): Promise<Docker.ImageInspectInfo> {
  let info: Docker.ImageInspectInfo;
  try {
    info = await docker.getImage(image).inspect();
  } catch (error) {
    if (isNotFound(error)) throw imageMissing(image, error);
    throw error;
  }
  const volumes = Object.keys(info.Config?.Volumes ?? {});
  if (volumes.length > 0) {
    throw new SandboxError(
      `the sandbox image ${image} declares VOLUME ${volumes.join(", ")}: a volume would be writable beside the sandbox's read-only root`,
      { code: "image_unsuitable", hint: "Use an image without VOLUME instructions." },
    );
  }
  return info;
}

/** Lists the tools the image lacks, in a throwaway container with no network, no capability, as uid 1000. */
export async function probeImage(docker: Docker, image: string, id: string): Promise<ImageFitness> {
  const names = [...REQUIRED_TOOLS, ...NETWORK_TOOLS];
  // /bin/sh may be all there is: bash is one of the tools looked for.
  const script = `for t in ${names.join(" ")}; do command -v "$t" >/dev/null 2>&1 || echo "missing $t"; done; echo probed`;
  const output = await runThrowaway(docker, id, ["/bin/sh", "-c", script]);
  if (!output.includes("probed")) {
    throw new SandboxError(`the sandbox image ${image} cannot run /bin/sh: ${output.trim().slice(0, 300)}`, {
      code: "image_unsuitable",
      hint: `The image needs a POSIX shell and ${REQUIRED_TOOLS.join(", ")}.`,
    });
  }
  const missing = [...output.matchAll(/^missing (\S+)$/gm)].map((m) => m[1] ?? "");
  return {
    id,
    missing: missing.filter((t) => !(NETWORK_TOOLS as readonly string[]).includes(t)),
    missingForNetwork: missing.filter((t) => (NETWORK_TOOLS as readonly string[]).includes(t)),
  };
}

/** The error naming what an image lacks, and what to do. */
export function unsuitableImage(image: string, missing: string[], forNetwork: boolean): SandboxError {
  const why = forNetwork ? "setup's network rules need" : "the sandbox needs";
  return new SandboxError(`the sandbox image ${image} lacks ${missing.join(", ")}, which ${why}`, {
    code: "image_unsuitable",
    hint: forNetwork
      ? "Install iptables in the image, or set `setup.network: false` in .github/agent-fix.yml."
      : `Install them in the image (Debian: apt-get install ripgrep git util-linux), or use an agent-fix image (agent-fix-sandbox-rich has ${REQUIRED_TOOLS.join(", ")}).`,
  });
}

/** The Dockerfile of the derived image: the image's own binaries, run once as root, no network. */
function derivedDockerfile(id: string): string {
  return `FROM ${id}
USER 0:0
RUN mkdir -p ${PRIVATE_BIN} ${WORKDIR} \\
 && for b in ${HELPERS.join(" ")}; do cp "$(command -v "$b")" ${PRIVATE_BIN}/; done \\
 && chmod 0111 ${PRIVATE_BIN}/* && chmod 0755 ${PRIVATE_BIN} \\
 && chown 1000:1000 ${WORKDIR} \\
 && git config --system user.name agent-fix && git config --system user.email agent-fix@localhost \\
 && git config --system core.pager cat && git config --system --add safe.directory ${WORKDIR}
ENTRYPOINT []
LABEL ${DERIVED_FROM_LABEL}="${id}"
`;
}

/** agent-fix-derived:HASH for an image id (and this file's recipe): built once, then reused. */
export async function derivedImage(docker: Docker, image: string, id: string): Promise<string> {
  const dockerfile = derivedDockerfile(id);
  const tag = `${DERIVED_IMAGE_NAME}:${createHash("sha256").update(dockerfile).digest("hex").slice(0, 16)}`;
  try {
    await docker.getImage(tag).inspect();
    return tag;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const context = pack();
  context.entry({ name: "Dockerfile" }, dockerfile);
  context.finalize();
  await buildImage(docker, context as unknown as NodeJS.ReadableStream, {
    tag,
    kind: "derived",
    what: `the sandbox image ${image} ready for the sandbox`,
    hint: `The worker copies ${HELPERS.join(", ")} within the image and runs git config there, with no network.`,
  });
  return tag;
}

/** Runs a command in a container as locked down as a sandbox and returns its output (stdout and stderr). */
export async function runThrowaway(docker: Docker, image: string, cmd: string[]): Promise<string> {
  const container = await docker.createContainer({
    Image: image,
    Entrypoint: cmd,
    Cmd: [],
    User: "1000:1000",
    Env: [],
    Healthcheck: { Test: ["NONE"] },
    HostConfig: {
      NetworkMode: "none",
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      Memory: 256 * 1024 ** 2,
      PidsLimit: 64,
      LogConfig: { Type: "json-file", Config: {} },
    },
  });
  try {
    await container.start();
    await container.wait();
    let output = "";
    const logs = (await container.logs({ stdout: true, stderr: true, follow: false })) as Buffer;
    // Without a TTY the log is multiplexed: 8-byte frame headers before each chunk.
    let offset = 0;
    while (offset + 8 <= logs.length) {
      const size = logs.readUInt32BE(offset + 4);
      output += logs.subarray(offset + 8, offset + 8 + size).toString("utf8");
      offset += 8 + size;
    }
    return output;
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}
