/** What the `agent-fix` commands (worker/cli.ts) share: printing, option parsers, a sandbox with its ACI. */

import { existsSync } from "node:fs";
import { basename } from "node:path";
import { InvalidArgumentError, Option } from "commander";
import type { DockerSandboxProvider, DockerSandboxProviderOptions } from "../../sandbox/docker.js";
import { createSandboxProvider } from "../../sandbox/index.js";
import { SANDBOX_IMAGE } from "../../sandbox/version.js";
import type { Sandbox } from "../../src/contracts.js";
import { ConfigError } from "../../src/errors.js";
import { createEnvironment } from "../aci/index.js";
import type { AgentFixConfig } from "../agent/config-file.js";
import type { RepositoryPolicy } from "../config/repo-policy.js";
import { caBundleFile } from "../config/worker-env.js";
import { checkImagePresent, chooseLocalImage, type LocalImage } from "./local-image.js";

export type SandboxDriver = "docker" | "local";

/** The exit code a command's action hands back (0 success, 1 no accepted result, 2 bad input). */
export type SetExitCode = (code: number) => void;

export const print = (line: string) => process.stdout.write(`${line}\n`);

export const sandboxOption = () =>
  new Option("--sandbox <driver>", "where commands run: docker (isolated) or local (no isolation)")
    .choices(["docker", "local"])
    .default("docker");

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new InvalidArgumentError("expected a whole number of at least 1");
  }
  return number;
}

/** An option's values, one per occurrence (a repeatable option). */
export const collect = (value: string, previous: string[]) => [...previous, value];

/** The operator's default image, as the worker reads it (AGENT_FIX_SANDBOX_IMAGE, worker/config/worker-env.ts). */
const defaultSandboxImage = () => process.env.AGENT_FIX_SANDBOX_IMAGE || SANDBOX_IMAGE;

export const imageOption = () =>
  new Option(
    "--image <name>",
    "the Docker image the sandbox runs (default: chosen as the worker chooses it, from the repository's files)",
  );

/** The sandbox of a command on a local checkout: where it runs, and the image it starts from. */
interface SandboxChoice {
  driver: SandboxDriver;
  /** `--image`, when given. */
  image?: string | undefined;
  /** The checkout's name, part of the key of an image built from it. */
  repoName: string;
}

/**
 * For eval and mine: the image a checkout calls for (as `run` chooses it), checked to be on the
 * engine; undefined for an image built from a devcontainer's Dockerfile (an instance's `image` names one).
 */
export function checkoutImage(provider: DockerSandboxProvider, policy: RepositoryPolicy) {
  return async (checkoutDir: string): Promise<string | undefined> => {
    const chosen = await chooseLocalImage({
      root: checkoutDir,
      name: basename(checkoutDir),
      policy,
      ...imageDefaults(provider),
    });
    if (!("image" in chosen)) return undefined;
    await checkImagePresent((image) => provider.docker.getImage(image).inspect(), chosen.image);
    return chosen.image;
  };
}

/** The operator's default image, and the provider's probe of an image's toolchains (the default's when undefined). */
function imageDefaults(provider: DockerSandboxProvider) {
  const defaultImage = defaultSandboxImage();
  return {
    defaultImage,
    toolchains: (image: string | undefined) => provider.toolchains(image ?? defaultImage),
  };
}

/** The image a Docker sandbox on `sourceDir` starts from (local-image.ts), checked to be on the engine. */
async function dockerImageFor(
  choice: SandboxChoice,
  sourceDir: string,
  config: AgentFixConfig,
  provider: DockerSandboxProvider,
): Promise<LocalImage> {
  const chosen = await chooseLocalImage({
    root: sourceDir,
    name: choice.repoName,
    policy: config.repository,
    ...imageDefaults(provider),
    override: choice.image,
  });
  if ("image" in chosen) {
    await checkImagePresent((image) => provider.docker.getImage(image).inspect(), chosen.image);
  }
  print(`image: ${"image" in chosen ? chosen.image : "built from the repository"} (${chosen.reason})`);
  return chosen;
}

/**
 * The CLI's Docker sandboxes, trusting the CAs of AGENT_FIX_CA_BUNDLE as the worker's do (default the
 * host's bundle, `none` the image's own): the setup of `eval` and `mine` reaches the registries, through
 * a TLS-inspecting proxy too.
 */
export function cliDockerSandboxes(options: DockerSandboxProviderOptions = {}): DockerSandboxProvider {
  const caBundle = caBundleFile(process.env.AGENT_FIX_CA_BUNDLE, existsSync);
  return createSandboxProvider("docker", { ...(caBundle ? { caBundle } : {}), ...options });
}

/** The sandbox of `choice` on `sourceDir`: Docker's from the image chosen for it, or the host's. */
async function createSandbox(
  choice: SandboxChoice,
  sourceDir: string,
  jobId: string,
  config: AgentFixConfig,
): Promise<Sandbox> {
  if (choice.driver === "local") {
    if (choice.image !== undefined) {
      throw new ConfigError(`--image ${choice.image}: the local sandbox runs on this host, in no image`, {
        code: "cli_options_invalid",
        hint: "Leave out --image, or run with --sandbox docker.",
      });
    }
    return createSandboxProvider("local").create({ sourceDir, jobId });
  }
  const provider = createSandboxProvider("docker");
  const image = await dockerImageFor(choice, sourceDir, config, provider);
  return provider.create({
    sourceDir,
    jobId,
    ...("image" in image ? { image: image.image } : { imageBuild: image.build }),
  });
}

/**
 * A sandbox on `sourceDir` and the ACI over it; the sandbox is removed if the ACI cannot start. With
 * Docker, the image is chosen as the worker chooses it (or `--image`), and printed with the reason.
 */
export async function startSandbox(
  choice: SandboxChoice,
  sourceDir: string,
  jobId: string,
  config: AgentFixConfig,
) {
  const sandbox = await createSandbox(choice, sourceDir, jobId, config);
  try {
    const environment = await createEnvironment({ sandbox, config: config.aci });
    return { sandbox, environment };
  } catch (error) {
    await sandbox.dispose();
    throw error;
  }
}
