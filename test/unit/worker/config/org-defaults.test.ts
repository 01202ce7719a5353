import { describe, expect, it } from "vitest";
import { mergeOver, withoutExtends } from "../../../../worker/config/org-defaults.js";

describe("a repository's file merged over the organisation's defaults", () => {
  it("merges objects key by key; a list or a value the repository sets replaces the default's", () => {
    const org = { limits: { maxSteps: 12, maxCostUsd: 3 }, forbiddenPaths: ["secrets/**"], tools: "aci" };
    const repo = { limits: { maxCostUsd: 1 }, forbiddenPaths: ["keys/**"], test: { command: "make check" } };
    expect(mergeOver(org, repo)).toEqual({
      limits: { maxSteps: 12, maxCostUsd: 1 },
      forbiddenPaths: ["keys/**"],
      tools: "aci",
      test: { command: "make check" },
    });
    expect(mergeOver(org, {})).toEqual(org);
    expect(mergeOver({}, repo)).toEqual(repo);
  });

  it("accepts Probot's `_extends: .github` (the base it has anyway) and refuses any other base", () => {
    expect(withoutExtends({ _extends: ".github", tools: "aci" }, "acme", "f")).toEqual({ tools: "aci" });
    expect(withoutExtends({ _extends: "acme/.github" }, "acme", "f")).toEqual({});
    expect(() => withoutExtends({ _extends: "evil/.github" }, "acme", ".github/agent-fix.yml")).toThrow(
      '.github/agent-fix.yml is invalid: `_extends`: "evil/.github" is not supported',
    );
  });
});
