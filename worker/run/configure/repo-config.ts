/**
 * The run's config step: the repository's `.github/agent-fix.yml`, always as it is on the default
 * branch, read through GitHub's contents API: never from the checkout, which for a review run is the
 * agent's own branch (an agent that rewrote the file must not set the rules of the next run), and never as
 * a host file (a symlink in the repository must not make the worker read the host). The operator's
 * `repository:` rules are applied here, before any sandbox starts.
 */

import picomatch from "picomatch";
import type { SandboxLimits, SetupUser, WorkspaceEnv } from "../../../src/shared/contracts.js";
import { ConfigError } from "../../../src/shared/errors.js";
import type { PullRequestTemplate } from "../../agent/index.js";
import type { ToolBundleName } from "../../config/aci.js";
import type { DetectedPart } from "../../config/detect/ecosystem-rule.js";
import type { Detection } from "../../config/detect/index.js";
import { detectedSetupSteps } from "../../config/detect/optional-install.js";
import {
  describeDetection,
  detectedSnippet,
  LOOKED_FOR,
  nothingDetectedHint,
} from "../../config/detect/report.js";
import { mergeOver, ORG_CONFIG_REPO, withoutExtends } from "../../config/org-defaults.js";
import {
  DEFAULT_TEST_PATHS,
  parseRepoYaml,
  REPO_CONFIG_PATH,
  type RepoConfig,
  validateRepoConfig,
} from "../../config/repo.js";
import type { DetectedSetup } from "../prepare/setup.js";
import { type ContentsApi, readContents, readingAhead, type Where } from "./contents.js";
import { detectFromRepository } from "./detect.js";
import type { ImageBuild } from "./devcontainer-build.js";
import {
  chooseRepoImage,
  DEVCONTAINER_PATHS,
  declinedDevcontainerNote,
  imageAllowed,
  toolchainImageChoice,
} from "./image-choice.js";
import { findPullRequestTemplate } from "./pr-template.js";
import { checkLimitCeilings, checkModelChoice, type OperatorRules } from "./repo-rules.js";
import { chooseToolchains, type ToolchainCandidate, type ToolchainChoice } from "./toolchain-choice.js";

/** The repository config as the pipeline uses it (validated from .github/agent-fix.yml by worker/config/repo.ts). */
export interface PipelineRepoConfig {
  setup: string[];
  /** Set when detection wrote `setup` (no file names setup commands): optional installs' fallbacks, the snippet. */
  detectedSetup?: DetectedSetup | undefined;
  setupTimeoutMs: number;
  setupNetwork: boolean;
  /** Who runs setup (root: system packages); the agent never is root. Default agent. */
  setupUser?: SetupUser;
  testCommand: string;
  testTimeoutMs: number;
  /** The operator's ceiling of `testTimeoutMs`: the gate's limit, from the baseline's time, stays under it. */
  testTimeoutCeilingMs?: number | undefined;
  forbiddenPaths: string[];
  testPaths: string[] | undefined;
  openPrWhenBaselineFails: boolean;
  maxSteps: number;
  limits?: Partial<SandboxLimits>;
  /** Where the settings came from when not (only) the repository's file: shown in the status comment. */
  configNote?: string | undefined;
  /** The image the repository chose and the operator allows (worker/run/configure/image-choice.ts); the provider's default otherwise. */
  image?: string | undefined;
  /** Or the image its devcontainer.json builds, checked (worker/run/configure/devcontainer-build.ts). */
  imageBuild?: ImageBuild | undefined;
  /** The detected commands' variables (caches, a provided Node), in every sandbox's shell for the run. */
  workspaceEnv?: WorkspaceEnv | undefined;
}

/** What the agent wiring takes from the repository config beside the pipeline's own fields. */
export interface RepoAgentSettings {
  model: string | undefined;
  maxSteps: number;
  maxCostUsd: number | undefined;
  maxWallTimeSeconds: number | undefined;
  toolBundle: ToolBundleName | undefined;
  /** The repository's pull request template (pr-template.ts), filled in as the description. */
  pullRequestTemplate?: PullRequestTemplate | undefined;
}

export type LoadedRepoConfig = PipelineRepoConfig & { agent: RepoAgentSettings };

/** Larger than any sensible config: a bigger file is refused unread. */
const MAX_REPO_CONFIG_BYTES = 64 * 1024;

/**
 * The text of `path` (the repository config unless named) on `ref` (the default branch when unset), or
 * null when it does not exist. Anything but a small regular file is refused.
 */
async function fetchRepoConfigText(
  api: ContentsApi,
  where: Where,
  path: string = REPO_CONFIG_PATH,
): Promise<string | null> {
  const read = await readContents(api, where, path, MAX_REPO_CONFIG_BYTES);
  const on = where.ref ? `${path} on ${where.ref}` : `${where.owner}/${where.repo}: ${path}`;
  switch (read.kind) {
    case "file":
      return read.text;
    case "missing":
      return null;
    case "not_a_file":
      throw new ConfigError(`${on} is ${read.what}, not a regular file`, {
        code: "repo_config_not_a_file",
        hint: `Commit the configuration itself at ${path}.`,
      });
    case "too_large":
      throw new ConfigError(`${on} has ${read.size} bytes; at most ${MAX_REPO_CONFIG_BYTES} are read`, {
        code: "repo_config_too_large",
        hint: "Keep the file to the settings agent-fix reads.",
      });
  }
}

/** Where the config comes from: the repository, and the owner's `.github` repository when the installation has it. */
interface ConfigSources {
  repo: ContentsApi;
  org: ContentsApi | null;
}

/**
 * Reads the owner's defaults and the repository's file (default branch), merges the repository's over
 * the defaults, finds the setup and test commands from the repository's files when neither file names
 * a test command, and applies the operator's rules to the result. A bad file, nothing to test, a limit
 * above its ceiling or a model the operator did not allow is a ConfigError naming it.
 */
export async function loadRepoConfig(
  sources: ConfigSources,
  where: { owner: string; repo: string; defaultBranch: string },
  rules: OperatorRules,
): Promise<LoadedRepoConfig> {
  const { owner } = where;
  const orgSource = `${owner}/${ORG_CONFIG_REPO}: ${REPO_CONFIG_PATH}`;
  // The devcontainer's files are asked for with the config's, not after it: they choose the image
  // only when the config names none, but in series they would cost two more round trips every run.
  const readDefaultBranch = readingAhead(
    (path) => fetchRepoConfigText(sources.repo, { owner, repo: where.repo, ref: where.defaultBranch }, path),
    DEVCONTAINER_PATHS,
  );
  const [orgText, repoText, template] = await Promise.all([
    sources.org && where.repo !== ORG_CONFIG_REPO
      ? fetchRepoConfigText(sources.org, { owner, repo: ORG_CONFIG_REPO })
      : null,
    fetchRepoConfigText(sources.repo, { owner, repo: where.repo, ref: where.defaultBranch }),
    findPullRequestTemplate(sources, where),
  ]);
  // Each file is checked alone first, so that an error names the file it is in.
  const orgData = orgText === null ? {} : checkedData(orgText, owner, orgSource);
  const repoData = repoText === null ? {} : checkedData(repoText, owner, REPO_CONFIG_PATH);
  const data = mergeOver(orgData, repoData) as { setup?: { commands?: unknown } };
  const config = validateRepoConfig(
    data,
    orgText === null ? REPO_CONFIG_PATH : `${REPO_CONFIG_PATH} over ${orgSource}`,
  );
  const notes = orgText === null ? [] : [orgNote(orgSource, repoText !== null)];
  let testCommand = config.test.command;
  let detection: Detection | undefined;
  if (testCommand === undefined) {
    detection = await detectFromRepository(sources.repo, {
      owner,
      repo: where.repo,
      ref: where.defaultBranch,
    });
    if (detection.test === null) {
      throw new ConfigError(
        `No test command: ${REPO_CONFIG_PATH} names none${orgText === null ? "" : ` (nor does ${orgSource})`}, and the default branch (${where.defaultBranch}) has none of ${LOOKED_FOR}`,
        { code: "repo_config_missing", hint: nothingDetectedHint() },
      );
    }
    testCommand = detection.test;
    // Setup commands a file names are kept; detected ones are used only where no file names any.
    if (data.setup?.commands === undefined) config.setup.commands = detection.setup;
  }
  const chosen = await chooseRepoImage(readDefaultBranch, config.sandbox?.image, rules.policy.images);
  // A devcontainer image the operator does not allow is set aside: the run chooses as without one.
  const declined = chosen && "declined" in chosen ? chosen : undefined;
  const repoChoice = chosen && !("declined" in chosen) ? chosen : undefined;
  // A repository that chose no image gets the image (and what setup provides) its declared toolchain
  // versions need; refused here, before any sandbox, when none of the operator's images can run it.
  const toolchains =
    detection && !repoChoice ? await toolchainsFor(detection.parts, rules, config.setup.network) : undefined;
  // Without a probe (a driver that cannot tell), the toolchain image when a detected part needs one.
  const toolchain =
    repoChoice || toolchains ? undefined : toolchainImageChoice(detection?.parts ?? [], rules.policy);
  const image = toolchains ? toolchains.image : toolchain?.image;
  if (detection) notes.push(describeDetection(detection, toolchains));
  if (declined) notes.push(declinedDevcontainerNote(declined, image));
  if (toolchain) notes.push(toolchain.note);
  // What provides a declared toolchain runs first, before setup commands a file names too: they are
  // the repository's, and would run on the image's own version otherwise.
  if (toolchains) config.setup.commands = [...toolchains.setup, ...config.setup.commands];
  // Detected setup (no file names setup commands): its optional installs' fallbacks, and the snippet a
  // failing step shows, with what provides the toolchains as the status's own snippet has it.
  const detectedSetup: DetectedSetup | undefined =
    detection && data.setup?.commands === undefined
      ? { steps: detectedSetupSteps(detection), snippet: detectedSnippet(detection, toolchains) }
      : undefined;
  const loaded = withTemplate(
    withImage(
      {
        ...toPipelineConfig({ ...config, test: { ...config.test, command: testCommand } }, rules),
        ...(detectedSetup ? { detectedSetup } : {}),
      },
      repoChoice ?? (image === undefined ? undefined : { image }),
    ),
    template,
  );
  const workspaceEnv = detection && runEnv(detection.env, toolchains?.env);
  const withEnv = workspaceEnv ? { ...loaded, workspaceEnv } : loaded;
  return notes.length ? { ...withEnv, configNote: notes.join("\n\n") } : withEnv;
}

/** The detected parts' variables and what the toolchain choice provided; undefined when there are none. */
function runEnv(detected: WorkspaceEnv, provided: WorkspaceEnv | undefined): WorkspaceEnv | undefined {
  const env = {
    vars: { ...detected.vars, ...provided?.vars },
    path: [...(provided?.path ?? []), ...detected.path],
  };
  return Object.keys(env.vars).length || env.path.length ? env : undefined;
}

/**
 * The toolchain choice over the operator's images: its default, `toolchainImage` and each exact name
 * of `images` (a pattern names no image to probe), each probed once per image id by the provider. An
 * image the engine does not have is left out; undefined when none could be probed (or no probe).
 * `agent-fix` chooses with it too (worker/cli/local-image.ts).
 */
export async function toolchainsFor(
  parts: readonly DetectedPart[],
  rules: Pick<OperatorRules, "policy" | "toolchains">,
  setupNetwork: boolean,
): Promise<ToolchainChoice | undefined> {
  const probe = rules.toolchains;
  if (!probe || parts.length === 0) return undefined;
  const { toolchainImage, images } = rules.policy;
  const named = [
    ...(toolchainImage !== null && imageAllowed(toolchainImage, images) ? [toolchainImage] : []),
    ...images.filter((image) => !picomatch.scan(image).isGlob),
  ];
  const probed = await Promise.all(
    [undefined, ...new Set(named)].map((image) =>
      probe(image).then(
        (toolchains): ToolchainCandidate => ({ image, toolchains }),
        () => null, // not on this engine: not a candidate
      ),
    ),
  );
  const seen = new Set<string>();
  const candidates = probed.filter((candidate): candidate is ToolchainCandidate => {
    if (candidate === null || seen.has(candidate.toolchains.image)) return false;
    seen.add(candidate.toolchains.image);
    return true;
  });
  if (candidates.length === 0) return undefined;
  return chooseToolchains(parts, candidates, { setupNetwork });
}

/** The image the repository chose (named, or built from its devcontainer), when it chose one. */
function withImage(
  loaded: LoadedRepoConfig,
  choice: Exclude<Awaited<ReturnType<typeof chooseRepoImage>>, { declined: string }> | { image: string },
): LoadedRepoConfig {
  if (!choice) return loaded;
  return "build" in choice ? { ...loaded, imageBuild: choice.build } : { ...loaded, image: choice.image };
}

function withTemplate(loaded: LoadedRepoConfig, template: PullRequestTemplate | null): LoadedRepoConfig {
  return template ? { ...loaded, agent: { ...loaded.agent, pullRequestTemplate: template } } : loaded;
}

function checkedData(text: string, owner: string, source: string): unknown {
  const data = withoutExtends(parseRepoYaml(text, source), owner, source);
  validateRepoConfig(data, source);
  return data;
}

function orgNote(orgSource: string, repoHasFile: boolean): string {
  return repoHasFile
    ? `Settings: \`${orgSource}\` (the organisation's defaults), with this repository's ${REPO_CONFIG_PATH} merged over it.`
    : `Settings: \`${orgSource}\` (the organisation's defaults; this repository has no ${REPO_CONFIG_PATH}).`;
}

export function toPipelineConfig(config: RepoConfig, rules: OperatorRules): LoadedRepoConfig {
  const testCommand = config.test.command;
  if (testCommand === undefined) {
    throw new ConfigError(`${REPO_CONFIG_PATH} names no test command`, {
      code: "repo_config_missing",
      hint: nothingDetectedHint(),
    });
  }
  const bundle = config.tools === "default" ? undefined : config.tools;
  checkLimitCeilings(config, rules.policy.ceilings);
  checkModelChoice(config.model, rules);
  const maxSteps = config.limits.maxSteps ?? rules.defaultMaxSteps;
  return {
    setup: config.setup.commands,
    setupTimeoutMs: config.setup.timeoutSeconds * 1000,
    setupNetwork: config.setup.network,
    setupUser: config.setup.user,
    testCommand,
    testTimeoutMs: config.test.timeoutSeconds * 1000,
    testTimeoutCeilingMs: rules.policy.ceilings.testTimeoutSeconds * 1000,
    // The operator's forbidden paths hold whatever the repository lists (an empty list included).
    forbiddenPaths: [...new Set([...rules.policy.forbiddenPaths, ...config.forbiddenPaths])],
    testPaths: config.test.paths ?? DEFAULT_TEST_PATHS,
    openPrWhenBaselineFails: config.openPullRequestWhenBaselineFails,
    maxSteps,
    agent: {
      model: config.model,
      maxSteps,
      maxCostUsd: config.limits.maxCostUsd,
      maxWallTimeSeconds: config.limits.maxTimeMinutes ? config.limits.maxTimeMinutes * 60 : undefined,
      toolBundle: bundle,
    },
  };
}
