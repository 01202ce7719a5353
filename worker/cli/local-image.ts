/**
 * The image of a CLI run's Docker sandboxes, chosen as the worker chooses it (the run's config
 * step) but from the local checkout's files: its `.github/agent-fix.yml`'s
 * `sandbox.image`, else its devcontainer's image or Dockerfile, else the first of the operator's images
 * (the default, AGENT_FIX_SANDBOX_IMAGE as the worker reads it, first) whose probed toolchains meet what
 * detection finds and the versions the checkout declares (worker/run/configure/repo-config.ts's toolchainsFor, with no
 * setup network: the CLI runs no setup to provide one), else the default image. The same choice functions under the same image
 * policy (the config's `repository:` section); `--image` overrides them all.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { SANDBOX_IMAGE_NAME, SANDBOX_RICH_IMAGE_NAME } from "../../sandbox/version.js";
import type { ImageToolchains, RepoImageBuildSpec } from "../../src/shared/contracts.js";
import { ConfigError } from "../../src/shared/errors.js";
import { artefactRules } from "../aci/artefacts.js";
import type { DetectedPart } from "../config/detect/ecosystem-rule.js";
import { detectCommands, filesToRead } from "../config/detect/index.js";
import { parseRepoYaml, REPO_CONFIG_PATH, type RepoConfig, validateRepoConfig } from "../config/repo.js";
import type { RepositoryPolicy } from "../config/repo-policy.js";
import {
  chooseRepoImage,
  declinedDevcontainerNote,
  toolchainImageChoice,
} from "../run/configure/image-choice.js";
import { toolchainsFor } from "../run/configure/repo-config.js";

/** The files detection reads at most, and their size, as the worker reads them through the API. */
const MAX_READS = 40;
const MAX_FILE_BYTES = 512 * 1024;
/** Paths listed at most: detection needs the manifests near the root, not every file of a monorepo. */
const MAX_PATHS = 200_000;

/** The image a run starts from (or the one it builds), and why, for the run's first lines. */
export type LocalImage = { image: string; reason: string } | { build: RepoImageBuildSpec; reason: string };

/** A regular file's text under `root`, null when absent, not a regular file or larger than `maxBytes`. */
async function readLocalFile(root: string, path: string, maxBytes: number): Promise<string | null> {
  const full = join(root, path);
  const info = await lstat(full).catch(() => null);
  if (!info?.isFile() || info.size > maxBytes) return null;
  return readFile(full, "utf8");
}

/** The checkout's files (not `.git`, nor the artefact directories: node_modules, .venv…), from the root. */
async function listLocalFiles(root: string): Promise<string[]> {
  const skipped = new Set([
    ".git",
    ...artefactRules([]).flatMap((rule) => (rule.dirName ? [rule.dirName] : [])),
  ]);
  const paths: string[] = [];
  const queue = [""];
  // Breadth first: past MAX_PATHS, the files near the root (where manifests are) are the ones kept.
  for (let dir = queue.shift(); dir !== undefined && paths.length < MAX_PATHS; dir = queue.shift()) {
    const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skipped.has(entry.name)) queue.push(path);
      } else if (entry.isFile()) paths.push(path);
    }
  }
  return paths;
}

/** Detection (worker/config/detect) over the checkout's files: the parts found. */
async function detectLocal(root: string): Promise<DetectedPart[]> {
  const paths = await listLocalFiles(root);
  const contents = new Map<string, string>();
  for (const path of filesToRead(paths).slice(0, MAX_READS)) {
    const text = await readLocalFile(root, path, MAX_FILE_BYTES);
    if (text !== null) contents.set(path, text);
  }
  return detectCommands({ paths, contents }).parts;
}

/** The checkout's agent-fix.yml; its `_extends` (the organisation's defaults, not read here) left out. */
function localRepoConfig(text: string, source: string): RepoConfig {
  const data = parseRepoYaml(text, source);
  if (typeof data !== "object" || data === null || Array.isArray(data))
    return validateRepoConfig(data, source);
  const { _extends: _, ...own } = data as Record<string, unknown>;
  return validateRepoConfig(own, source);
}

export async function chooseLocalImage(options: {
  /** The checkout on the host. */
  root: string;
  /** The repository's name: part of a built image's cache key. */
  name: string;
  policy: RepositoryPolicy;
  /** The operator's default image. */
  defaultImage: string;
  /** `--image`: wins over everything. */
  override?: string | undefined;
  /** The toolchain versions an image has (the provider's probe; undefined: the default image). */
  toolchains?: ((image: string | undefined) => Promise<ImageToolchains>) | undefined;
}): Promise<LocalImage> {
  const { root, policy } = options;
  if (options.override !== undefined) return { image: options.override, reason: "named by --image" };
  const read = (path: string) => readLocalFile(root, path, MAX_FILE_BYTES);
  const configText = await read(REPO_CONFIG_PATH);
  const config = configText === null ? undefined : localRepoConfig(configText, join(root, REPO_CONFIG_PATH));
  // As the worker: detection only for a repository whose file names no test command.
  const detected = config?.test.command === undefined ? await detectLocal(root) : [];
  const chosen = await chooseRepoImage(read, config?.sandbox?.image, policy.images);
  const declined = chosen && "declined" in chosen ? chosen : undefined;
  const repoChoice = chosen && !("declined" in chosen) ? chosen : undefined;
  // As the worker: the image whose toolchains meet the versions the checkout declares (no setup runs
  // here, so none is provided from a registry); without a probe, the toolchain image by ecosystem.
  const versions =
    repoChoice || detected.length === 0
      ? undefined
      : await toolchainsFor(detected, { policy, toolchains: options.toolchains }, false).catch(withImageHint);
  const toolchain = repoChoice || versions ? undefined : toolchainImageChoice(detected, policy);
  const chosenImage = versions ? (versions.image ?? options.defaultImage) : toolchain?.image;
  const setAside = declined ? ` ${declinedDevcontainerNote(declined, chosenImage)}` : "";
  if (repoChoice && "build" in repoChoice) {
    const { build } = repoChoice;
    return {
      build: {
        root,
        context: build.context,
        dockerfile: build.dockerfile,
        bases: build.bases,
        name: options.name,
      },
      reason: `built from ${build.dockerfilePath}, which ${repoChoice.source} names`,
    };
  }
  if (repoChoice) return { image: repoChoice.image, reason: `named in ${repoChoice.source}` };
  if (versions) {
    const needed = [...new Set(detected.map((part) => part.ecosystem))].join(", ");
    const why =
      versions.lines.length > 0
        ? `the toolchain versions the checkout declares:\n${versions.lines.join("\n")}`
        : `the first of the operator's images with what the checkout needs (${needed})`;
    return { image: chosenImage!, reason: `${why}${setAside}` };
  }
  if (toolchain) return { image: toolchain.image, reason: `${toolchain.note}${setAside}` };
  return { image: options.defaultImage, reason: `the default image${setAside}` };
}

/** A refusal of the declared toolchains, with the CLI's own way out. */
function withImageHint(error: unknown): never {
  if (error instanceof ConfigError && error.code === "repo_toolchain_unavailable") {
    throw new ConfigError(error.message, {
      code: error.code,
      hint: `${error.hint ?? ""} Or name an image that has it with --image.`.trim(),
    });
  }
  throw error;
}

/** Throws a ConfigError saying how to get `image` when the engine lacks it (the worker never pulls one). */
export async function checkImagePresent(
  inspect: (image: string) => Promise<unknown>,
  image: string,
): Promise<void> {
  const found = await inspect(image).then(
    () => true,
    (error: { statusCode?: number }) => {
      if (error.statusCode === 404) return false;
      throw error;
    },
  );
  if (found) return;
  const [repository] = image.split(":");
  const hint =
    repository === SANDBOX_RICH_IMAGE_NAME
      ? "Build it with `npm run sandbox:image:rich` (sandbox/image/build.sh --rich), or choose another with --image."
      : repository === SANDBOX_IMAGE_NAME
        ? "Build it with `npm run sandbox:image` (sandbox/image/build.sh), or choose another with --image."
        : `Pull or build it (\`docker pull ${image}\`), or choose another with --image.`;
  throw new ConfigError(`the image ${image} is not on this Docker engine`, {
    code: "cli_image_missing",
    hint,
  });
}
