/**
 * Which toolchain versions an image provides: one short container per image id (as locked down as
 * the image probe of docker/foreign-image.ts: no network, no capability, uid 1000, read-only root) prints
 * each tool's version, and the answer is kept for the worker's life, keyed by the image's id, so an
 * image built again under the same name is probed again.
 */
import type Docker from "dockerode";
import type { ImageToolchains, Toolchain } from "../../src/shared/contracts.js";
import { inspectForeignImage, runThrowaway } from "./foreign-image.js";

/** Each toolchain's version command; a tool not installed prints nothing. */
const PROBES: Record<Toolchain, string> = {
  node: "node --version",
  python: "python3 --version",
  go: "go version",
  rust: "rustc --version",
  ruby: "ruby --version",
  java: "java -version",
};

const SCRIPT = Object.entries(PROBES)
  .map(
    ([name, command]) =>
      `command -v ${command.split(" ")[0]} >/dev/null 2>&1 && echo "${name}: $(${command} 2>&1 | head -n 1)"`,
  )
  .join("; ")
  .concat("; echo probed");

/** A version as each tool prints it: `v20.19.2`, `Python 3.13.5`, `go version go1.24.4 linux/amd64`, `openjdk version "1.8.0_412"`. */
export function parseToolchainVersions(output: string): ImageToolchains["versions"] {
  const versions: ImageToolchains["versions"] = {};
  for (const line of output.split("\n")) {
    const match = /^(node|python|go|rust|ruby|java): .*?(\d+(?:\.\d+)+)(?:_(\d+))?/.exec(line);
    const [, name, version, update] = match ?? [];
    if (!name || !version) continue;
    // Java 8 and before say 1.8.0_412: its major version is 8.
    const legacyJava = name === "java" ? /^1\.(\d+)\.(\d+)$/.exec(version) : null;
    versions[name as Toolchain] = legacyJava ? `${legacyJava[1]}.${legacyJava[2]}.${update ?? 0}` : version;
  }
  return versions;
}

export class ImageToolchainProbe {
  private readonly probed = new Map<string, Promise<ImageToolchains["versions"]>>();

  constructor(private readonly docker: Docker) {}

  /** The versions `image` provides, probed on first use of its id. */
  async versions(image: string): Promise<ImageToolchains> {
    const info = await inspectForeignImage(this.docker, image);
    let versions = this.probed.get(info.Id);
    if (!versions) {
      versions = runThrowaway(this.docker, info.Id, ["/bin/sh", "-c", SCRIPT]).then(parseToolchainVersions);
      // A failure is not kept: the engine may answer next time.
      versions.catch(() => this.probed.delete(info.Id));
      this.probed.set(info.Id, versions);
    }
    return { image, versions: await versions };
  }
}
