import { join } from "node:path";
import type { ToolBundleName } from "../../src/config/aci.js";
import {
  DEFAULT_TEST_PATHS,
  parseRepoConfig,
  REPO_CONFIG_PATH,
  type RepoConfig,
} from "../../src/config/repo.js";
import { ConfigError } from "../../src/errors.js";
import type { PipelineRepoConfig } from "./run.js";
import { readOptional } from "./run.js";

/** What the agent wiring takes from the repository config beside the pipeline's own fields. */
export interface RepoAgentSettings {
  model: string | undefined;
  maxSteps: number;
  maxCostUsd: number | undefined;
  maxWallTimeSeconds: number | undefined;
  toolBundle: ToolBundleName | undefined;
}

export type LoadedRepoConfig = PipelineRepoConfig & { agent: RepoAgentSettings };

/**
 * Step 4: reads .github/agent-fix.yml from the default branch's checkout and validates it. A missing
 * or bad file is a ConfigError naming the field, which ends the run before any sandbox starts.
 */
export async function loadRepoConfig(
  checkoutDir: string,
  defaultMaxSteps: number,
): Promise<LoadedRepoConfig> {
  const text = await readOptional(join(checkoutDir, REPO_CONFIG_PATH));
  if (text === null) {
    throw new ConfigError(`${REPO_CONFIG_PATH} is missing on the default branch`, {
      code: "repo_config_missing",
      hint: `Add it with at least the test command, e.g.:\ntest:\n  command: npm test`,
    });
  }
  return toPipelineConfig(parseRepoConfig(text), defaultMaxSteps);
}

export function toPipelineConfig(config: RepoConfig, defaultMaxSteps: number): LoadedRepoConfig {
  const bundle = config.tools === "default" ? undefined : config.tools;
  if (bundle !== undefined && bundle !== "aci" && bundle !== "editor") {
    throw new ConfigError(`${REPO_CONFIG_PATH} is invalid: \`tools\`: unknown bundle "${bundle}"`, {
      code: "repo_config_invalid",
      hint: "Example of the right form:\ntools: aci   # or editor, or default",
    });
  }
  const maxSteps = config.limits.maxSteps ?? defaultMaxSteps;
  return {
    setup: config.setup.commands,
    setupTimeoutMs: config.setup.timeoutSeconds * 1000,
    setupNetwork: config.setup.network,
    testCommand: config.test.command,
    testTimeoutMs: config.test.timeoutSeconds * 1000,
    forbiddenPaths: config.forbiddenPaths,
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
