/**
 * Loading config/default.yaml, optionally overlaid by a user's file (`agent-fix run --config FILE`):
 * objects merge key by key, anything else replaces. Each section is validated by its zod schema; a wrong
 * key or value is a ConfigError naming the key and the file it came from.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { z } from "zod";
import { ConfigError } from "../../src/shared/errors.js";
import { type AciConfig, aciConfigSchema } from "../config/aci.js";
import { type AgentConfig, agentConfigSchema } from "../config/agent.js";
import { type CiConfig, ciConfigSchema } from "../config/ci.js";
import { type GithubTextConfig, githubTextConfigSchema } from "../config/github-text.js";
import { type ModelConfig, modelConfigSchema } from "../config/model.js";
import { type QuotasConfig, quotasConfigSchema } from "../config/quotas.js";
import { type RepositoryPolicy, repositoryPolicySchema } from "../config/repo-policy.js";
import { type WorkerTuning, workerTuningSchema } from "../config/worker-tuning.js";
import { renderDemonstration } from "./demonstration.js";
import { readTrajectory } from "./inspect.js";

/** config/default.yaml of this package, from the sources (worker/agent/) or the build (dist/worker/agent/). */
const DEFAULT_CONFIG_PATH = ["../../config/default.yaml", "../../../config/default.yaml"]
  .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
  .reduce((found, candidate) => (existsSync(found) ? found : candidate));

export interface AgentFixConfig {
  aci: AciConfig;
  agent: AgentConfig;
  model: ModelConfig;
  /** What a repository's own config may choose (ceilings, models, forbidden paths). */
  repository: RepositoryPolicy;
  /** How runs are shared between installations: runs at once, budgets, plans (worker/jobs/admission.ts). */
  quotas: QuotasConfig;
  /** What the app's text on GitHub may hold: the hosts links and images of the model's text may point at. */
  github: GithubTextConfig;
  /** How each worker process paces itself and what it keeps warm (lock, reaper, kept environments, standbys). */
  worker: WorkerTuning;
  /** Failing checks on the app's pull request: how many CI rounds one pull request gets. */
  ci: CiConfig;
  /** sha256 (16 hex) of the resolved configuration: recorded in trajectories. */
  hash: string;
  /** The files it was read from, in order. */
  sources: string[];
}

/** The sections of the operator's YAML and their schemas, in the order docs/reference/configuration.md lists them. */
export const operatorConfigSections = {
  aci: aciConfigSchema,
  agent: agentConfigSchema,
  model: modelConfigSchema,
  repository: repositoryPolicySchema,
  quotas: quotasConfigSchema,
  github: githubTextConfigSchema,
  worker: workerTuningSchema,
  ci: ciConfigSchema,
} as const;
type Section = keyof typeof operatorConfigSections;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function mergeConfig(base: unknown, overlay: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(overlay)) return overlay === undefined ? base : overlay;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) merged[key] = mergeConfig(base[key], value);
  return merged;
}

async function readYaml(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`, {
      code: "config_unreadable",
    });
  }
  let data: unknown;
  try {
    data = parse(text) ?? {};
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(error as Error).message}`, {
      code: "config_invalid",
    });
  }
  if (!isPlainObject(data)) {
    throw new ConfigError(
      `config file ${path} must hold a mapping with the sections ${Object.keys(operatorConfigSections).join(", ")}`,
      {
        code: "config_invalid",
      },
    );
  }
  for (const key of Object.keys(data)) {
    if (!(key in operatorConfigSections)) {
      throw new ConfigError(`config file ${path}: unknown section "${key}"`, {
        code: "config_invalid",
        hint: `The sections are ${Object.keys(operatorConfigSections).join(", ")}.`,
      });
    }
  }
  return data;
}

/** Which file set a key: the last file that mentions its path. */
function fileOf(path: (string | number | symbol)[], files: { path: string; data: unknown }[]): string {
  for (let i = files.length - 1; i >= 0; i--) {
    let node: unknown = files[i]!.data;
    let found = true;
    for (const key of path) {
      if (!isPlainObject(node) || !(String(key) in node)) {
        found = false;
        break;
      }
      node = node[String(key)];
    }
    if (found) return files[i]!.path;
  }
  return files.at(-1)!.path;
}

export async function loadConfig(options: { files?: string[]; overrides?: Record<string, unknown> } = {}) {
  const paths = [DEFAULT_CONFIG_PATH, ...(options.files ?? [])];
  const files = await Promise.all(paths.map(async (path) => ({ path, data: await readYaml(path) })));
  let merged: Record<string, unknown> = {};
  for (const file of files) merged = mergeConfig(merged, file.data) as Record<string, unknown>;
  if (options.overrides) merged = mergeConfig(merged, options.overrides) as Record<string, unknown>;

  const resolved = {} as { [K in Section]: z.infer<(typeof operatorConfigSections)[K]> };
  for (const section of Object.keys(operatorConfigSections) as Section[]) {
    const result = operatorConfigSections[section].safeParse(merged[section] ?? {});
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const path = [section, ...issue.path];
      const keys =
        issue.code === "unrecognized_keys"
          ? ` (unknown key ${issue.keys.map((k) => `"${k}"`).join(", ")})`
          : "";
      throw new ConfigError(`${fileOf(path, files)}: ${path.join(".")}: ${issue.message}${keys}`, {
        code: "config_invalid",
        hint: "Fix the key named above; config/default.yaml lists every key with its default.",
      });
    }
    (resolved as Record<Section, unknown>)[section] = result.data;
  }
  const demonstration = resolved.agent.demonstrationFile;
  if (demonstration) {
    const from = fileOf(["agent", "demonstrationFile"], files);
    const path = isAbsolute(demonstration) ? demonstration : resolve(dirname(from), demonstration);
    const trajectory = await readTrajectory(path).catch((error: unknown) => {
      throw new ConfigError(`${from}: agent.demonstrationFile: ${(error as Error).message}`, {
        code: "config_invalid",
        hint: "Point agent.demonstrationFile at a .traj file written by agent-fix run, or set it to null.",
      });
    });
    resolved.agent.prompts.demonstration = renderDemonstration(trajectory);
  }
  const hash = createHash("sha256").update(JSON.stringify(resolved)).digest("hex").slice(0, 16);
  return { ...resolved, hash, sources: paths } satisfies AgentFixConfig;
}
