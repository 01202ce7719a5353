/**
 * Organisation defaults, with the semantics of Probot's `context.config`: the owner's `.github`
 * repository holds `.github/agent-fix.yml` for every repository of the installation, and a
 * repository's own file is merged over it. Objects merge key by key; a list or a value the
 * repository sets replaces the organisation's. Probot's `_extends: .github` is accepted (it names
 * this base); other bases are refused, so a repository cannot pull settings from elsewhere.
 */
import { ConfigError } from "../../src/shared/errors.js";

/** The repository holding the owner's defaults, as GitHub and Probot name it. */
export const ORG_CONFIG_REPO = ".github";

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `over` merged over `base`: nested objects merged, everything else taken from `over` when it has it. */
export function mergeOver(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) merged[key] = mergeOver(base[key], value);
  return merged;
}

/** The data without `_extends`, which may only name the owner's `.github` repository. */
export function withoutExtends(data: unknown, owner: string, source: string): unknown {
  if (!isPlainObject(data) || !("_extends" in data)) return data;
  const { _extends: base, ...rest } = data;
  if (base === ORG_CONFIG_REPO || base === `${owner}/${ORG_CONFIG_REPO}`) return rest;
  throw new ConfigError(
    `${source} is invalid: \`_extends\`: ${JSON.stringify(base)} is not supported; only the owner's ${ORG_CONFIG_REPO} repository is a base`,
    {
      code: "repo_config_invalid",
      hint: `Remove \`_extends\` (${owner}/${ORG_CONFIG_REPO}'s .github/agent-fix.yml applies to every repository anyway), or write \`_extends: .github\`.`,
    },
  );
}
