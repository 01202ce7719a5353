import { describe, expect, it } from "vitest";
import { DEFAULT_TEST_PATHS } from "../../../../worker/config/repo.js";
import { analyseTestChanges, weakensTests } from "../../../../worker/github/test-changes.js";
import { pathMatcher } from "../../../../worker/run/push/forbidden-paths.js";

// The files the proof applies alone to the unchanged code and the pull request's test-change warning
// looks at, when .github/agent-fix.yml names no `test.paths`: the layouts of real repositories.
const isTest = pathMatcher(DEFAULT_TEST_PATHS);

describe("the default test files", () => {
  it.each([
    [
      "Python: tests/, test_*.py and *_test.py anywhere, root tests.py and test.py, Django's app tests.py",
      [
        "tests/test_stats.py",
        "test_cli.py",
        "src/pkg/test_util.py",
        "pkg/util_test.py",
        "tests.py",
        "test.py",
        "polls/tests.py",
        "conftest.py",
        "src/pkg/conftest.py",
      ],
    ],
    ["Go: *_test.go at the root and in packages", ["clamp_test.go", "internal/num/clamp_test.go"]],
    [
      "JavaScript and TypeScript: .test/.spec files and __tests__/, test/ of a workspace package",
      [
        "src/a.test.ts",
        "lib/b.spec.js",
        "src/__tests__/c.js",
        "__tests__/d.tsx",
        "test/index.js",
        "packages/core/test/parse.mjs",
      ],
    ],
    [
      "Rust, Java, Ruby: a crate's tests/, a module's src/test/, specs",
      [
        "tests/integration.rs",
        "crates/core/tests/api.rs",
        "src/test/java/a/ATest.java",
        "module-a/src/test/java/a/BTest.java",
        "spec/models/user_spec.rb",
        "lib/parser_spec.rb",
      ],
    ],
  ])("%s", (_what, paths) => {
    expect(paths.filter((path) => !isTest(path))).toEqual([]);
  });

  it("not code whose name only contains test, test data or docs", () => {
    const code = [
      "src/latest.py",
      "attest.py",
      "contest.py",
      "src/testing/util.go",
      "testdata/x.txt",
      "docs/test.md",
      "src/protest.ts",
      "lib/spec.ts",
    ];
    expect(code.filter(isTest)).toEqual([]);
  });

  it("a root tests.py the change edits raises the warning; one it only adds tests to does not", () => {
    const patch = (removed: string) =>
      [
        "diff --git a/tests.py b/tests.py",
        "--- a/tests.py",
        "+++ b/tests.py",
        "@@ -3,3 +3,6 @@",
        " class RomanTest(unittest.TestCase):",
        ...(removed ? [`-${removed}`] : []),
        "     def test_one(self):",
        '         self.assertEqual(to_roman(1), "I")',
        "+",
        "+    def test_four(self):",
        '+        self.assertEqual(to_roman(4), "IV")',
        "diff --git a/roman.py b/roman.py",
        "--- a/roman.py",
        "+++ b/roman.py",
        "@@ -1,2 +1,2 @@",
        " def to_roman(n):",
        '-    return "I" * n',
        '+    return "IV" if n == 4 else "I" * n',
      ].join("\n");
    const testFiles = ["tests.py", "roman.py"].filter(isTest);
    expect(testFiles).toEqual(["tests.py"]);
    const added = analyseTestChanges({ patch: patch(""), testFiles });
    expect(added).toMatchObject({
      extended: ["tests.py"],
      modified: [],
      addedTests: ["test_four (tests.py)"],
    });
    expect(weakensTests(added)).toBe(false);
    const edited = analyseTestChanges({ patch: patch("    maxDiff = None"), testFiles });
    expect(edited.modified).toEqual(["tests.py"]);
    expect(weakensTests(edited)).toBe(true);
  });
});
