/**
 * The operator's rules for what a repository's config may choose: limits up to their ceilings, models
 * from the operator's list, and only models with a known price. A choice outside them is refused
 * (not clamped), before any sandbox starts, with an error naming the field, the value and the limit:
 * a maintainer who asked for more should learn that they did not get it.
 */

import type { ImageToolchains } from "../../../src/shared/contracts.js";
import { ConfigError } from "../../../src/shared/errors.js";
import type { ModelConfig } from "../../config/model.js";
import { REPO_CONFIG_PATH, type RepoConfig } from "../../config/repo.js";
import type { Ceiling, RepositoryPolicy } from "../../config/repo-policy.js";
import { requirePrice } from "../../model/cost.js";

/** The operator's side of a run's config: defaults, the `repository:` rules, the model table. */
export interface OperatorRules {
  defaultMaxSteps: number;
  policy: RepositoryPolicy;
  model: Pick<ModelConfig, "name" | "prices">;
  /** The model every run uses whatever the repository says (AGENT_FIX_MODEL). */
  modelOverride?: string | undefined;
  /** Whether a repository may name a `replay:FILE` model (tests and the demo only). */
  allowReplayModels?: boolean;
  /**
   * The toolchain versions an image provides (the sandbox provider's probe, the default image when
   * undefined); without it a repository's image is chosen by its ecosystems alone.
   */
  toolchains?: ((image: string | undefined) => Promise<ImageToolchains>) | undefined;
}

/** Each repository field that has a ceiling, with the ceiling's key and unit. */
const ceilingOf: {
  field: string;
  ceiling: Ceiling;
  unit: string;
  value: (c: RepoConfig) => number | undefined;
}[] = [
  { field: "limits.maxSteps", ceiling: "maxSteps", unit: "steps", value: (c) => c.limits.maxSteps },
  {
    field: "limits.maxCostUsd",
    ceiling: "maxCostUsd",
    unit: "US dollars",
    value: (c) => c.limits.maxCostUsd,
  },
  {
    field: "limits.maxTimeMinutes",
    ceiling: "maxTimeMinutes",
    unit: "minutes",
    value: (c) => c.limits.maxTimeMinutes,
  },
  {
    field: "setup.timeoutSeconds",
    ceiling: "setupTimeoutSeconds",
    unit: "seconds",
    value: (c) => c.setup.timeoutSeconds,
  },
  {
    field: "test.timeoutSeconds",
    ceiling: "testTimeoutSeconds",
    unit: "seconds",
    value: (c) => c.test.timeoutSeconds,
  },
];

/** Throws a ConfigError naming every limit set above the operator's ceiling. */
export function checkLimitCeilings(config: RepoConfig, ceilings: RepositoryPolicy["ceilings"]): void {
  const above = ceilingOf.flatMap(({ field, ceiling, unit, value }) => {
    const asked = value(config);
    return asked !== undefined && asked > ceilings[ceiling]
      ? [
          `\`${field}\`: ${asked} is above the operator's ceiling of ${ceilings[ceiling]} ${unit} (repository.ceilings.${ceiling})`,
        ]
      : [];
  });
  if (above.length === 0) return;
  throw new ConfigError(
    `${REPO_CONFIG_PATH} asks for more than this installation allows: ${above.join("; ")}`,
    {
      code: "repo_config_above_ceiling",
      hint: "Lower the value to the ceiling or below (or leave it out for the operator's default), or ask the operator to raise the ceiling.",
    },
  );
}

/**
 * The model a run will use must be one the operator allows (its own `model.name`, or one listed in
 * `repository.models`) and have a price. Replay models are for tests, allowed only when the operator says so.
 */
export function checkModelChoice(repoModel: string | undefined, rules: OperatorRules): void {
  const chosen = rules.modelOverride ?? repoModel ?? rules.model.name;
  if (!rules.modelOverride && repoModel !== undefined) {
    if (repoModel.startsWith("replay:")) {
      if (!rules.allowReplayModels) throw replayModelRefused();
    } else if (repoModel !== rules.model.name && !rules.policy.models.includes(repoModel)) {
      const allowed = [rules.model.name, ...rules.policy.models].join(", ");
      throw new ConfigError(
        `${REPO_CONFIG_PATH} is invalid: \`model\`: ${repoModel} is not one of the models the operator allows (${allowed})`,
        {
          code: "repo_model_not_allowed",
          hint: "Name one of the allowed models, or leave `model` out; the operator adds models in repository.models.",
        },
      );
    }
  }
  if (chosen.startsWith("openai:")) requirePrice(rules.model.prices, chosen.slice("openai:".length));
}

/** The error for a repository config naming a replay model where those are not allowed. */
function replayModelRefused(): ConfigError {
  return new ConfigError(".github/agent-fix.yml is invalid: `model`: replay models are for tests only", {
    code: "repo_config_invalid",
    hint: "Example of the right form:\nmodel: openai:gpt-4.1",
  });
}
