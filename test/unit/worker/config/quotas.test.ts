import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { PULL_REQUEST_COST_RUNS, pullRequestCostCeiling } from "../../../../worker/config/quotas.js";

describe("the ceiling of a pull request's total cost", () => {
  it("unset: a multiple of the per-run ceiling, following it when the operator raises that", async () => {
    const defaults = await loadConfig();
    expect(defaults.quotas.maxCostUsdPerPullRequest).toBeUndefined();
    expect(pullRequestCostCeiling(defaults)).toBe(PULL_REQUEST_COST_RUNS * defaults.agent.limits.maxCostUsd);
    const raised = await loadConfig({ overrides: { agent: { limits: { maxCostUsd: 8 } } } });
    expect(pullRequestCostCeiling(raised)).toBe(PULL_REQUEST_COST_RUNS * 8);
  });

  it("set: that figure; null: no ceiling", async () => {
    const set = await loadConfig({ overrides: { quotas: { maxCostUsdPerPullRequest: 12.5 } } });
    expect(pullRequestCostCeiling(set)).toBe(12.5);
    const none = await loadConfig({ overrides: { quotas: { maxCostUsdPerPullRequest: null } } });
    expect(pullRequestCostCeiling(none)).toBeNull();
  });

  it("refuses a ceiling that is not a positive figure, naming the key", async () => {
    await expect(loadConfig({ overrides: { quotas: { maxCostUsdPerPullRequest: 0 } } })).rejects.toThrow(
      "quotas.maxCostUsdPerPullRequest",
    );
    await expect(loadConfig({ overrides: { quotas: { maxCostUsdPerPullRequest: "ten" } } })).rejects.toThrow(
      "quotas.maxCostUsdPerPullRequest",
    );
  });
});
