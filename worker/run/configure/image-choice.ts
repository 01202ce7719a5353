/**
 * Which image a run's sandboxes use: the repository's `sandbox.image` in .github/agent-fix.yml, else the
 * `image` of its .devcontainer/devcontainer.json (the file developers already keep for this) or the image
 * its `build.dockerfile` builds (devcontainer-build.ts), else the operator's default. A repository's choice must match the operator's `repository.images`.
 * An explicit `sandbox.image` that does not is refused before a sandbox starts, naming the allowed ones;
 * a devcontainer's image (or Dockerfile base) that does not is only a hint: devcontainers are written for
 * Codespaces and name public images (mcr.microsoft.com/devcontainers/python:3) no default allows, so the
 * run falls back to what it would choose without one and says so. Both files are read on the default branch
 * through the contents API, like the config: an agent's branch never chooses the next run's image.
 */
import JSON5 from "json5";
import picomatch from "picomatch";
import { ConfigError } from "../../../src/shared/errors.js";
import type { DetectedPart, Ecosystem } from "../../config/detect/ecosystem-rule.js";
import { REPO_CONFIG_PATH } from "../../config/repo.js";
import { checkDockerfile, devcontainerBuild, type ImageBuild } from "./devcontainer-build.js";

export const DEVCONTAINER_PATHS = [".devcontainer/devcontainer.json", ".devcontainer.json"] as const;

type ImageSource = typeof REPO_CONFIG_PATH | (typeof DEVCONTAINER_PATHS)[number];

/** A repository's own choice of image, and the file that made it. */
interface RepoImageChoice {
  image: string;
  source: ImageSource;
}

/** What a repository's files say about its image: a named one, one to build, or none. */
type RepoImage = RepoImageChoice | { build: ImageBuild; source: ImageSource };

/** A devcontainer whose image the operator does not allow: set aside, the run chooses as without one. */
interface DeclinedDevcontainer {
  declined: string;
  source: ImageSource;
}

/** The operator's patterns, matched against the image as written (`*` stops at `/`, `**` does not). */
export function imageAllowed(image: string, allowed: readonly string[]): boolean {
  return allowed.some((pattern) => picomatch.isMatch(image, pattern, { dot: true, nobrace: true }));
}

/** Throws a ConfigError naming the image, the file that named it and the images the operator allows. */
function checkImageAllowed(choice: RepoImageChoice, allowed: readonly string[]): void {
  if (imageAllowed(choice.image, allowed)) return;
  const list = allowed.length > 0 ? allowed.join(", ") : "none: only the operator's default image";
  throw new ConfigError(
    `${choice.source} names the image ${choice.image}, which is not one of the images the operator allows (${list})`,
    {
      code: "repo_image_not_allowed",
      hint:
        choice.source === REPO_CONFIG_PATH
          ? "Name an allowed image in `sandbox.image`, or leave it out for the operator's default; the operator adds images in repository.images."
          : "Set `sandbox.image` in .github/agent-fix.yml to an allowed image (it wins over devcontainer.json), or ask the operator to add this one to repository.images.",
    },
  );
}

/** A devcontainer.json's text (JSON with comments) as an object. */
function parseDevcontainer(text: string, source: ImageSource): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON5.parse(text);
  } catch (error) {
    throw new ConfigError(`${source} is not valid JSON: ${(error as Error).message}`, {
      code: "repo_config_invalid",
      hint: "Fix its syntax, or set `sandbox.image` in .github/agent-fix.yml (which wins over it), e.g.:\nsandbox:\n  image: agent-fix-sandbox-rich:0.1.0",
    });
  }
  return (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
}

/** A file's text on the default branch, null when absent (config.ts's fetchRepoConfigText). */
type ReadRepoFile = (path: string) => Promise<string | null>;

/** devcontainer.json's image or build, checked; undefined for one that names neither (compose files). */
async function devcontainerChoice(
  readRepoFile: ReadRepoFile,
  source: (typeof DEVCONTAINER_PATHS)[number],
  text: string,
  allowed: readonly string[],
): Promise<RepoImage | DeclinedDevcontainer | undefined> {
  const file = parseDevcontainer(text, source);
  if (typeof file.image === "string" && file.image.length > 0) {
    if (!imageAllowed(file.image, allowed)) return { declined: file.image, source };
    return { image: file.image, source };
  }
  const build = devcontainerBuild(file, source);
  if (!build) return undefined;
  const dockerfile = await readRepoFile(build.dockerfilePath);
  if (dockerfile === null) {
    throw new ConfigError(
      `${source}: its build.dockerfile ${build.dockerfilePath} is not in the repository`,
      {
        code: "repo_config_invalid",
        hint: "Commit the Dockerfile, or set `sandbox.image` in .github/agent-fix.yml.",
      },
    );
  }
  // A base the operator does not allow is set aside like a devcontainer's image; everything else the
  // check refuses (network fetches, variables, the worker's own images, files outside) is still refused.
  const notAllowed: string[] = [];
  const bases = checkDockerfile(dockerfile, build.dockerfilePath, (image) => {
    if (!imageAllowed(image, allowed)) notAllowed.push(image);
    return true;
  });
  if (notAllowed.length > 0)
    return { declined: notAllowed.join(", "), source: build.dockerfilePath as ImageSource };
  return { build: { ...build, dockerfile, bases }, source };
}

/**
 * The repository's choice (agent-fix.yml's `sandbox.image`, else devcontainer.json's `image` or build),
 * checked against the operator's list; undefined when the repository names none (the default runs), a
 * DeclinedDevcontainer when its devcontainer names one the operator does not allow.
 */
export async function chooseRepoImage(
  readRepoFile: ReadRepoFile,
  configured: string | undefined,
  allowed: readonly string[],
): Promise<RepoImage | DeclinedDevcontainer | undefined> {
  if (configured !== undefined) {
    const choice: RepoImageChoice = { image: configured, source: REPO_CONFIG_PATH };
    checkImageAllowed(choice, allowed);
    return choice;
  }
  for (const path of DEVCONTAINER_PATHS) {
    const text = await readRepoFile(path);
    if (text !== null) return devcontainerChoice(readRepoFile, path, text, allowed);
  }
  return undefined;
}

/** What the slim image cannot run: it has Python 3, Node, a C compiler and make, none of these. */
const NEEDS_TOOLCHAIN_IMAGE: readonly Ecosystem[] = ["go", "rust", "ruby", "java"];

/**
 * For a repository that chose no image: the operator's toolchain image when a detected part needs a
 * toolchain the slim image lacks and the operator's `images` allow it; undefined otherwise (the default
 * image runs). Returns the note for the status comment too.
 */
export function toolchainImageChoice(
  parts: readonly DetectedPart[],
  policy: { toolchainImage: string | null; images: readonly string[] },
): { image: string; note: string } | undefined {
  const { toolchainImage } = policy;
  const needing = [
    ...new Set(parts.map((p) => p.ecosystem).filter((e) => NEEDS_TOOLCHAIN_IMAGE.includes(e))),
  ];
  if (toolchainImage === null || needing.length === 0 || !imageAllowed(toolchainImage, policy.images))
    return undefined;
  return {
    image: toolchainImage,
    note: `Image: \`${toolchainImage}\`, which has the ${needing.join(", ")} toolchain (the operator's image for toolchains the default image lacks; \`sandbox.image\` in ${REPO_CONFIG_PATH} chooses another).`,
  };
}

/** The status comment's note for a devcontainer set aside, naming the image the run uses instead. */
export function declinedDevcontainerNote(
  declined: DeclinedDevcontainer,
  instead: string | undefined,
): string {
  const ran = instead ? `\`${instead}\`` : "the operator's default image";
  return `The devcontainer's image ${declined.declined} (${declined.source}) is not one the operator allows; ran in ${ran} instead (repository.images in the operator config allows more; \`sandbox.image\` in ${REPO_CONFIG_PATH} names an allowed one).`;
}
