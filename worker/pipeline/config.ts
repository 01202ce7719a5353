/**
 * Step 4: the repository's `.github/agent-fix.yml`, always as it is on the default branch, read through
 * GitHub's contents API: never from the checkout, which for a review run is the agent's own branch (an
 * agent that rewrote the file must not set the rules of the next run), and never as a host file (a
 * symlink in the repository must not make the worker read the host). The operator's `repository:` rules
 * are applied here, before any sandbox starts.
 */
import type { ToolBundleName } from "../../src/config/aci.js";
import {
  DEFAULT_TEST_PATHS,
  parseRepoConfig,
  REPO_CONFIG_PATH,
  type RepoConfig,
} from "../../src/config/repo.js";
import { ConfigError } from "../../src/errors.js";
import { githubFailure } from "../../src/github/index.js";
import { chooseRepoImage } from "./image-choice.js";
import { checkLimitCeilings, checkModelChoice, type OperatorRules } from "./repo-rules.js";
import type { PipelineRepoConfig } from "./run.js";

/** What the agent wiring takes from the repository config beside the pipeline's own fields. */
export interface RepoAgentSettings {
  model: string | undefined;
  maxSteps: number;
  maxCostUsd: number | undefined;
  maxWallTimeSeconds: number | undefined;
  toolBundle: ToolBundleName | undefined;
}

export type LoadedRepoConfig = PipelineRepoConfig & { agent: RepoAgentSettings };
export type { OperatorRules };

/** The slice of Octokit this needs: GET /repos/{owner}/{repo}/contents/{path}?ref=. */
export interface ContentsApi {
  rest: {
    repos: {
      getContent(params: { owner: string; repo: string; path: string; ref?: string }): Promise<{
        data: unknown;
      }>;
    };
  };
}

/** Larger than any sensible config: a bigger file is refused unread. */
export const MAX_REPO_CONFIG_BYTES = 64 * 1024;

interface ContentEntry {
  type?: string;
  size?: number;
  encoding?: string;
  content?: string;
  target?: string;
}

/** The file's text on `ref`, or null when it does not exist. Anything but a small regular file is refused. */
export async function fetchRepoConfigText(
  api: ContentsApi,
  where: { owner: string; repo: string; ref: string },
  path: string = REPO_CONFIG_PATH,
): Promise<string | null> {
  let data: unknown;
  try {
    ({ data } = await api.rest.repos.getContent({ ...where, path }));
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw githubFailure(error, `reading ${path} on ${where.ref}`);
  }
  const entry = (Array.isArray(data) ? { type: "dir" } : data) as ContentEntry;
  if (entry.type !== "file") {
    const what = entry.type === "symlink" ? `a symlink (to ${entry.target ?? "?"})` : `a ${entry.type}`;
    throw new ConfigError(`${path} on ${where.ref} is ${what}, not a regular file`, {
      code: "repo_config_not_a_file",
      hint: `Commit the configuration itself at ${path}.`,
    });
  }
  if ((entry.size ?? 0) > MAX_REPO_CONFIG_BYTES || entry.encoding !== "base64") {
    throw new ConfigError(
      `${path} on ${where.ref} has ${entry.size} bytes; at most ${MAX_REPO_CONFIG_BYTES} are read`,
      { code: "repo_config_too_large", hint: "Keep the file to the settings agent-fix reads." },
    );
  }
  return Buffer.from(entry.content ?? "", "base64").toString("utf8");
}

/**
 * Reads, validates and applies the operator's rules to the default branch's config. A missing or bad
 * file, a limit above its ceiling or a model the operator did not allow is a ConfigError naming it.
 */
export async function loadRepoConfig(
  api: ContentsApi,
  where: { owner: string; repo: string; defaultBranch: string },
  rules: OperatorRules,
): Promise<LoadedRepoConfig> {
  const text = await fetchRepoConfigText(api, {
    owner: where.owner,
    repo: where.repo,
    ref: where.defaultBranch,
  });
  if (text === null) {
    throw new ConfigError(`${REPO_CONFIG_PATH} is missing on the default branch (${where.defaultBranch})`, {
      code: "repo_config_missing",
      hint: `Add it with at least the test command, e.g.:\ntest:\n  command: npm test`,
    });
  }
  const parsed = parseRepoConfig(text);
  const loaded = toPipelineConfig(parsed, rules);
  const readRepoFile = (path: string) =>
    fetchRepoConfigText(api, { owner: where.owner, repo: where.repo, ref: where.defaultBranch }, path);
  const choice = await chooseRepoImage(readRepoFile, parsed.sandbox?.image, rules.policy.images);
  if (!choice) return loaded;
  return "build" in choice ? { ...loaded, imageBuild: choice.build } : { ...loaded, image: choice.image };
}

export function toPipelineConfig(config: RepoConfig, rules: OperatorRules): LoadedRepoConfig {
  const bundle = config.tools === "default" ? undefined : config.tools;
  if (bundle !== undefined && bundle !== "aci" && bundle !== "editor") {
    throw new ConfigError(`${REPO_CONFIG_PATH} is invalid: \`tools\`: unknown bundle "${bundle}"`, {
      code: "repo_config_invalid",
      hint: "Example of the right form:\ntools: aci   # or editor, or default",
    });
  }
  checkLimitCeilings(config, rules.policy.ceilings);
  checkModelChoice(config.model, rules);
  const maxSteps = config.limits.maxSteps ?? rules.defaultMaxSteps;
  return {
    setup: config.setup.commands,
    setupTimeoutMs: config.setup.timeoutSeconds * 1000,
    setupNetwork: config.setup.network,
    testCommand: config.test.command,
    testTimeoutMs: config.test.timeoutSeconds * 1000,
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
