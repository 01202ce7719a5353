import { describe, expect, it } from "vitest";
import { forbiddenChanges, globToRegExp } from "../../../worker/pipeline/forbidden-paths.js";

describe("forbidden paths", () => {
  it("matches the default workflow pattern at any depth and nothing beside it", () => {
    const paths = [
      ".github/workflows/ci.yml",
      ".github/workflows/sub/x.yml",
      ".github/agent-fix.yml",
      "src/a.py",
    ];
    expect(forbiddenChanges(paths, [".github/workflows/**"])).toEqual([
      ".github/workflows/ci.yml",
      ".github/workflows/sub/x.yml",
    ]);
  });

  it("keeps * within one segment and lets **/ match zero directories", () => {
    expect(globToRegExp("src/*.py").test("src/a.py")).toBe(true);
    expect(globToRegExp("src/*.py").test("src/x/a.py")).toBe(false);
    expect(globToRegExp("**/secrets.json").test("secrets.json")).toBe(true);
    expect(globToRegExp("**/secrets.json").test("a/b/secrets.json")).toBe(true);
    expect(globToRegExp("deploy/").test("deploy/prod/run.sh")).toBe(true);
    expect(globToRegExp("a.b").test("axb")).toBe(false);
  });
});
