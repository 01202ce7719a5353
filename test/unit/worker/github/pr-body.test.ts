/**
 * The pull request body's description (issue 24): the model's, given as such, stripped of hidden HTML
 * comments and bounded; without one, a description built from the run's facts, never a thought. The
 * app's own parts (the warnings, Fixes #N, the tests' result) stay outside the model's text.
 */
import { describe, expect, it } from "vitest";
import { DESCRIPTION_MAX_CHARS, renderPullRequestBody } from "../../../../worker/github/pr-body.js";
import { analyseTestChanges } from "../../../../worker/github/test-changes.js";

const PATCH = [
  "diff --git a/calc/ops.py b/calc/ops.py",
  "--- a/calc/ops.py",
  "+++ b/calc/ops.py",
  "@@ -1 +1,3 @@",
  "+    if not values:",
  "+        return 0",
  "diff --git a/tests/test_ops.py b/tests/test_ops.py",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/tests/test_ops.py",
  "@@ -0,0 +1,2 @@",
  "+def test_empty():",
  "+    assert mean([]) == 0",
  "",
].join("\n");

const base = {
  issueNumber: 7,
  issueTitle: "mean() crashes on an empty list",
  patch: PATCH,
  testCommand: "pytest -q",
  baselinePassed: true,
  gateAttempts: 1,
  model: "openai:gpt-4.1",
};

describe("pull request body", () => {
  it("opens with the model's description, then the app's own parts after it", () => {
    const filled =
      "## Why\n<!-- Describe the problem. -->\n`mean([])` divided by zero.\n\n## Checklist\n- [x] Tests added\n";
    const body = renderPullRequestBody({ ...base, description: filled });
    expect(
      body.startsWith("## Why\n`mean([])` divided by zero.\n\n## Checklist\n- [x] Tests added\n\nFixes #7\n"),
    ).toBe(true);
    expect(body).not.toContain("Describe the problem");
    expect(body).not.toContain("no description");
    expect(body.indexOf("## How this was tested")).toBeGreaterThan(body.indexOf("Fixes #7"));
  });

  it("without a description from the model, says so and describes the change from the run's facts", () => {
    const body = renderPullRequestBody({ ...base, description: null });
    expect(body).toContain(
      [
        "_The agent gave no description of its change; this one is built from the run._",
        "",
        "This change is for the issue “mean() crashes on an empty list”.",
        "It changes 2 files: `calc/ops.py`, `tests/test_ops.py`.",
        "",
        "Fixes #7",
      ].join("\n"),
    );
    expect(renderPullRequestBody({ ...base, description: "  \n" })).toContain("built from the run");
    // The issue's title is its author's text: a closing keyword there closes nothing.
    const hostile = renderPullRequestBody({ ...base, issueTitle: "Fixes #2", description: null });
    expect(hostile).toContain("F\u200Dixes #2");
  });

  it("bounds a long description with a note, and keeps the proof and test warnings outside it", () => {
    const body = renderPullRequestBody({
      ...base,
      description: `${"word ".repeat(10_000)}`,
      testChanges: analyseTestChanges({ patch: PATCH, testFiles: ["tests/test_ops.py"] }),
      proof: { testFiles: ["tests/test_ops.py"], failedBefore: true, passedAfter: true },
    });
    expect(body).toContain(
      `_…the description was cut here: ${DESCRIPTION_MAX_CHARS.toLocaleString("en-US")} of 49,999 characters shown._`,
    );
    // An added test file is no change to existing tests: no warning at the top.
    expect(body.startsWith("word word")).toBe(true);
    expect(body).toContain("| result | ❌ failed | ✅ passed |");
  });
});
