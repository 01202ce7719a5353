/**
 * The review-on-submit checklist (issue 24) with the default prompts: a regression test the model
 * added is never called something to remove, and without new files there is no empty item.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { reviewText } from "../../../worker/agent/conversation.js";
import { agentConfigSchema } from "../../../worker/config/agent.js";

const config = agentConfigSchema.parse(
  parse(readFileSync(new URL("../../../config/default.yaml", import.meta.url), "utf8")).agent,
);

const added = (path: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+x\n`;
const changed =
  "diff --git a/calc/ops.py b/calc/ops.py\nindex 1..2 100644\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1 +1 @@\n-a\n+b\n";

const checklist = (text: string) => text.slice(0, text.indexOf("\n\nIf anything needs fixing"));

describe("review checklist", () => {
  it("with only a regression test added, says to keep it, not to remove it", () => {
    expect(checklist(reviewText(config, changed + added("tests/test_mean.py")))).toBe(
      [
        "Thank you for your work on this issue. Before it is submitted, please review it:",
        "",
        "1. Did you reproduce the problem and confirm that your change fixes it?",
        "2. Did you run the repository's relevant tests, and do they pass?",
        "3. Did you remove the scratch scripts and files you created to reproduce the problem? (Tests you",
        "   added to the repository's test suite stay.)",
        "   Files your diff adds: tests/test_mean.py. They look like tests: keep them if they belong to the repository's test suite.",
        "4. Does the diff touch only what the issue needs? Revert unrelated changes.",
      ].join("\n"),
    );
    for (const test of ["pkg/mean_test.go", "src/mean.test.ts", "spec/mean_spec.rb", "lib/x.spec.js"])
      expect(reviewText(config, added(test))).toContain("They look like tests: keep them");
  });

  it("with a scratch script added, says to remove what only served reproduction and keep tests", () => {
    expect(reviewText(config, added("reproduce.py") + added("tests/test_mean.py"))).toContain(
      "   Files your diff adds: reproduce.py, tests/test_mean.py. Remove any that only served to reproduce the problem; keep tests that belong to the repository's test suite.\n4. Does",
    );
  });

  it("with no added file, renders no empty item", () => {
    expect(checklist(reviewText(config, changed)).split("\n").slice(-3)).toEqual([
      "3. Did you remove the scratch scripts and files you created to reproduce the problem? (Tests you",
      "   added to the repository's test suite stay.)",
      "4. Does the diff touch only what the issue needs? Revert unrelated changes.",
    ]);
  });
});
