/** Which pull requests `agent-fix mine` considers: GitHub's closing keywords, and tests beside code. */
import { describe, expect, it } from "vitest";
import { closedIssues, instanceId, splitFiles } from "../../../../../worker/eval/mine/candidates.js";

describe("closedIssues: GitHub's closing keywords in a pull request's description", () => {
  it("reads every keyword form, #N, OWNER/REPO#N and the issue's URL, once each", () => {
    const body = [
      "Fixes #1, closes: #2 and Resolved #3.",
      "fix acme/mathx#4; RESOLVES https://github.example.com/acme/mathx/issues/5",
      "closed #1 again",
    ].join("\n");
    expect(closedIssues(body, "acme", "mathx")).toEqual([1, 2, 3, 4, 5]);
  });
  it("ignores other repositories' issues, mentions without a keyword, and words that only contain one", () => {
    const body = "Fixes other/repo#7, see #8, prefixes #9, https://h/acme/mathx/pull/10, unfixed #11";
    expect(closedIssues(body, "acme", "mathx")).toEqual([]);
    expect(closedIssues(null, "acme", "mathx")).toEqual([]);
  });
});

describe("splitFiles: tests and code", () => {
  it("knows the runners' test file conventions", () => {
    const split = splitFiles([
      "src/app.py",
      "tests/test_app.py",
      "pkg/app_test.go",
      "web/app.test.ts",
      "web/__tests__/x.js",
      "spec/app_spec.rb",
      "conftest.py",
      "README.md",
    ]);
    expect(split).toEqual({
      tests: [
        "tests/test_app.py",
        "pkg/app_test.go",
        "web/app.test.ts",
        "web/__tests__/x.js",
        "spec/app_spec.rb",
        "conftest.py",
      ],
      code: ["src/app.py", "README.md"],
    });
  });
  it("says which kind is missing", () => {
    expect(splitFiles(["src/app.py"])).toEqual({ skip: "no_test_change" });
    expect(splitFiles(["tests/test_app.py"])).toEqual({ skip: "no_code_change" });
  });
  it("names instances as SWE-bench does", () => {
    expect(instanceId("acme", "mathx", 12)).toBe("acme__mathx-12");
  });
});
