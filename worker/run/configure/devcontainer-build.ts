/**
 * A devcontainer.json that builds its image (`build.dockerfile`): the worker executes the Dockerfile
 * itself from the repository's checkout, each step held as a sandbox is (sandbox/docker/repo-build.ts).
 * What the Dockerfile may do is checked here, on its text from the default branch, before anything is
 * built, by the parser the build executes from (sandbox/docker/dockerfile.ts): every image it starts from is
 * one the operator allows, named literally; `--from` names only its own stages; nothing is fetched
 * (URL or git sources); no ONBUILD. The build context and the Dockerfile stay inside the repository.
 */
import path from "node:path";
import { parseDockerfile } from "../../../sandbox/docker/dockerfile.js";
import { ConfigError } from "../../../src/shared/errors.js";

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

/**
 * The images a Dockerfile starts from, each checked by `allowed`; throws naming the line of the first
 * thing refused. The same parser's result is what the provider executes (sandbox/docker/repo-build.ts).
 */
export function checkDockerfile(text: string, where: string, allowed: (image: string) => boolean): string[] {
  return parseDockerfile(text, where, allowed).bases;
}
