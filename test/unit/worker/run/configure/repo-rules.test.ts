import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../../../worker/agent/config-file.js";
import { parseRepoConfig } from "../../../../../worker/config/repo.js";
import { toPipelineConfig } from "../../../../../worker/run/configure/repo-config.js";
import type { OperatorRules } from "../../../../../worker/run/configure/repo-rules.js";

// The operator's rules as config/default.yaml ships them (the real file, through the real loader).
const operator = await loadConfig();
const rules = (extra: Partial<OperatorRules> = {}): OperatorRules => ({
  defaultMaxSteps: operator.agent.limits.maxSteps,
  policy: operator.repository,
  model: operator.model,
  ...extra,
});
const load = (yaml: string, extra: Partial<OperatorRules> = {}) =>
  toPipelineConfig(parseRepoConfig(`test:\n  command: make test\n${yaml}`), rules(extra));
const refusal = (yaml: string, extra: Partial<OperatorRules> = {}) => {
  try {
    load(yaml, extra);
  } catch (error) {
    return error as Error & { code: string; fault: string; hint?: string };
  }
  throw new Error("the config was accepted");
};

describe("a repository's config cannot go above the operator's ceilings", () => {
  it("refuses $100, 500 steps and 4 h, naming each field, its value and the ceiling", () => {
    const error = refusal("limits:\n  maxCostUsd: 100\n  maxSteps: 500\n  maxTimeMinutes: 240\n");
    expect(error.code).toBe("repo_config_above_ceiling");
    expect(error.fault).toBe("config");
    expect(error.message).toContain(
      "`limits.maxCostUsd`: 100 is above the operator's ceiling of 10 US dollars (repository.ceilings.maxCostUsd)",
    );
    expect(error.message).toContain("`limits.maxSteps`: 500 is above the operator's ceiling of 100 steps");
    expect(error.message).toContain(
      "`limits.maxTimeMinutes`: 240 is above the operator's ceiling of 60 minutes",
    );
  });

  it("refuses setup and test timeouts above their ceilings", () => {
    const error = refusal("setup:\n  timeoutSeconds: 3600\n");
    expect(error.message).toContain(
      "`setup.timeoutSeconds`: 3600 is above the operator's ceiling of 1800 seconds",
    );
    const test = refusal("", {
      policy: {
        ...operator.repository,
        ceilings: { ...operator.repository.ceilings, testTimeoutSeconds: 60 },
      },
    });
    expect(test.message).toContain(
      "`test.timeoutSeconds`: 300 is above the operator's ceiling of 60 seconds",
    );
  });

  it("takes values at or under the ceilings, and the operator's defaults where none is set", () => {
    const config = load("limits:\n  maxCostUsd: 10\n  maxSteps: 20\n  maxTimeMinutes: 60\n");
    expect(config.agent).toMatchObject({ maxCostUsd: 10, maxSteps: 20, maxWallTimeSeconds: 3600 });
    expect(load("").maxSteps).toBe(operator.agent.limits.maxSteps);
  });
});

describe("a repository's config picks only models the operator allows, with a known price", () => {
  it("refuses a model not in the operator's list, naming it and the allowed ones", () => {
    const error = refusal("model: openai:o1-pro\n");
    expect(error.code).toBe("repo_model_not_allowed");
    expect(error.message).toContain(
      "`model`: openai:o1-pro is not one of the models the operator allows (openai:gpt-4.1)",
    );
  });

  it("takes the operator's model and those listed in repository.models", () => {
    expect(load("model: openai:gpt-4.1\n").agent.model).toBe("openai:gpt-4.1");
    const listed = { policy: { ...operator.repository, models: ["openai:gpt-4.1-mini"] } };
    expect(load("model: openai:gpt-4.1-mini\n", listed).agent.model).toBe("openai:gpt-4.1-mini");
  });

  it("refuses an allowed model without a price before the run starts, naming the model and the setting", () => {
    const allowed = { policy: { ...operator.repository, models: ["openai:o1-pro"] } };
    const error = refusal("model: openai:o1-pro\n", allowed);
    expect(error.code).toBe("model_price_unknown");
    expect(error.message).toContain("openai:o1-pro has no known price");
    expect(error.hint).toContain("model:\n  prices:\n    models:\n      o1-pro:");
    // The operator's own pinned model is held to the same rule.
    expect(refusal("", { modelOverride: "openai:o3-pro" }).code).toBe("model_price_unknown");
  });

  it("refuses replay models unless the operator allows them (tests, the demo)", () => {
    expect(refusal("model: replay:/etc/passwd\n").message).toContain("replay models are for tests only");
    expect(load("model: replay:x.jsonl\n", { allowReplayModels: true }).agent.model).toBe("replay:x.jsonl");
  });
});

describe("the operator's forbidden paths hold whatever the repository lists", () => {
  it("forbiddenPaths: [] still forbids the workflows and the config itself", () => {
    expect(load("forbiddenPaths: []\n").forbiddenPaths).toEqual([
      ".github/workflows/**",
      ".github/agent-fix.yml",
    ]);
    expect(load("forbiddenPaths: ['secrets']\n").forbiddenPaths).toEqual([
      ".github/workflows/**",
      ".github/agent-fix.yml",
      "secrets",
    ]);
  });
});
