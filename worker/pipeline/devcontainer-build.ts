/**
 * A devcontainer.json that builds its image (`build.dockerfile`): the worker builds it from the
 * repository's checkout with no network (sandbox/docker-build.ts). What the Dockerfile may do is checked
 * here, on its text from the default branch, before anything is built: every image it starts from
 * (`FROM`, `COPY --from`) is one the operator allows, named literally, and nothing is fetched (`ADD`
 * of a URL). The build context and the Dockerfile stay inside the repository.
 */
import path from "node:path";
import { ConfigError } from "../../src/errors.js";

/** What the worker builds: the Dockerfile's checked text and the context, relative to the checkout. */
export interface ImageBuild {
  dockerfilePath: string;
  dockerfile: string;
  context: string;
  /** The images it starts from, each allowed. */
  bases: string[];
}

const HINT =
  "Keep the Dockerfile to images the operator allows (repository.images) and files of the repository, or set `sandbox.image` in .github/agent-fix.yml.";

function refuse(message: string): ConfigError {
  return new ConfigError(message, { code: "repo_image_not_allowed", hint: HINT });
}

/** A path of the devcontainer.json (relative to its folder) as a path from the repository root; refused outside it. */
function insideRepository(devcontainerPath: string, relative: string, what: string): string {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(devcontainerPath), relative));
  if (joined === ".." || joined.startsWith("../") || path.posix.isAbsolute(relative)) {
    throw refuse(`${devcontainerPath}: ${what} ${relative} is outside the repository`);
  }
  return joined;
}

/** The Dockerfile and context a devcontainer.json's `build` names, or undefined when it has none. */
export function devcontainerBuild(
  file: Record<string, unknown>,
  devcontainerPath: string,
): { dockerfilePath: string; context: string } | undefined {
  const build = file.build as { dockerfile?: unknown; context?: unknown } | undefined;
  if (typeof build !== "object" || build === null || typeof build.dockerfile !== "string") return undefined;
  const context = typeof build.context === "string" ? build.context : ".";
  return {
    dockerfilePath: insideRepository(devcontainerPath, build.dockerfile, "build.dockerfile"),
    context: insideRepository(devcontainerPath, context, "build.context"),
  };
}

/** Joins continuation lines and drops comments: one instruction a line. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"));
}

/**
 * The images a Dockerfile starts from, each checked by `allowed`; throws naming the first one refused,
 * a FROM with a variable (its value is not known before the build), or an ADD of a URL.
 */
export function checkDockerfile(text: string, where: string, allowed: (image: string) => boolean): string[] {
  const stages = new Set<string>();
  const bases: string[] = [];
  const base = (image: string) => {
    if (stages.has(image.toLowerCase()) || image === "scratch") return;
    if (image.includes("$")) throw refuse(`${where}: FROM ${image} names its image with a variable`);
    if (!allowed(image))
      throw refuse(`${where} builds on ${image}, which is not one of the images the operator allows`);
    bases.push(image);
  };
  for (const line of instructions(text)) {
    const [keyword = "", ...words] = line.split(/\s+/);
    const args = words.filter((w) => !w.startsWith("--"));
    switch (keyword.toUpperCase()) {
      case "FROM":
        base(args[0] ?? "");
        if (args[1]?.toUpperCase() === "AS" && args[2]) stages.add(args[2].toLowerCase());
        break;
      case "COPY":
      case "ADD": {
        const from = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
        if (from !== undefined && !/^\d+$/.test(from)) base(from);
        if (keyword.toUpperCase() === "ADD" && args.some((a) => /^[a-z][a-z0-9+.-]*:\/\/|^git@/i.test(a))) {
          throw refuse(`${where}: ${line.slice(0, 120)} fetches from the network, which the build has not`);
        }
        break;
      }
    }
  }
  return bases;
}
