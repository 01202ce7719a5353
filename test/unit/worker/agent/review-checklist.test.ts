/**
 * The review-on-submit checklist (issue 24) with the default prompts: a regression test the model
 * added is never called something to remove, and without new files there is no empty item. The
 * review ends by asking for the pull request's description, saying it is published, in the way the
 * action format gives it, with the repository's template to fill in when it has one; with the review
 * off, the instance prompt asks. Golden texts: what the model reads, word for word.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { descriptionRequest, reviewText } from "../../../../worker/agent/conversation.js";
import { agentConfigSchema } from "../../../../worker/config/agent.js";

const config = agentConfigSchema.parse(
  parse(readFileSync(new URL("../../../../config/default.yaml", import.meta.url), "utf8")).agent,
);

const added = (path: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+x\n`;
const changed =
  "diff --git a/calc/ops.py b/calc/ops.py\nindex 1..2 100644\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1 +1 @@\n-a\n+b\n";

const checklist = (text: string) => text.slice(0, text.indexOf("\n\nThe diff:"));
const review = (diff: string) => reviewText(config, diff, descriptionRequest(config));

describe("review checklist", () => {
  it("with only a regression test added, says to keep it, not to remove it", () => {
    expect(checklist(review(changed + added("tests/test_mean.py")))).toBe(
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
      expect(review(added(test))).toContain("They look like tests: keep them");
  });

  it("with a scratch script added, says to remove what only served reproduction and keep tests", () => {
    expect(review(added("reproduce.py") + added("tests/test_mean.py"))).toContain(
      "   Files your diff adds: reproduce.py, tests/test_mean.py. Remove any that only served to reproduce the problem; keep tests that belong to the repository's test suite.\n4. Does",
    );
  });

  it("with no added file, renders no empty item", () => {
    expect(checklist(review(changed)).split("\n").slice(-3)).toEqual([
      "3. Did you remove the scratch scripts and files you created to reproduce the problem? (Tests you",
      "   added to the repository's test suite stay.)",
      "4. Does the diff touch only what the issue needs? Revert unrelated changes.",
    ]);
  });

  it("ends with the diff, then the request for the description, in submit's argument with function calls", () => {
    const text = review(changed);
    expect(text.slice(text.indexOf("\n\nThe diff:"))).toBe(
      [
        "",
        "",
        "The diff:",
        "",
        "<diff>",
        changed.trimEnd(),
        "</diff>",
        "",
        "If anything needs fixing, fix it now. Then call submit again to confirm.",
        "",
        ...REQUEST_HEAD,
        "not your working notes or answers to a checklist. Give it in submit's `description` argument.",
        "",
        "Write it in three parts, each under its heading:",
        "## What was wrong",
        "The problem the issue reports, and its cause in the code.",
        "## What changed",
        "What you changed, and why that fixes it.",
        "## How it was checked",
        "The tests you added or ran, and what they showed.",
        "",
        REQUEST_TAIL,
      ].join("\n"),
    );
  });

  it("in text mode asks for it as the reply's text, and shows the repository's template to fill in", () => {
    const text = descriptionRequest(
      { ...config, actionFormat: "thought_action" },
      {
        path: ".github/pull_request_template.md",
        text: "## Summary\n<!-- What and why? -->\n\n- [ ] Tests added\n",
      },
    );
    expect(text).toBe(
      [
        ...REQUEST_HEAD,
        "not your working notes or answers to a checklist. Write it as the text of your reply before the submit command: that text is published as it is, so write nothing else there.",
        "",
        "The repository asks for pull requests in the form of its template, .github/pull_request_template.md: fill it in. Keep its",
        "headings, answer what it asks (what was wrong, what changed and how it was checked, where it asks for",
        "them), tick only the boxes that hold, and leave out its HTML comments (<!-- ... -->).",
        "",
        "<pull_request_template>",
        "## Summary",
        "<!-- What and why? -->",
        "",
        "- [ ] Tests added",
        "</pull_request_template>",
        "",
        REQUEST_TAIL,
      ].join("\n"),
    );
    // A placeholder in the repository's template is its text, never expanded.
    expect(descriptionRequest(config, { path: "t.md", text: "{{where}} {{diff}}" })).toContain(
      "<pull_request_template>\n{{where}} {{diff}}\n</pull_request_template>",
    );
  });
});

const REQUEST_HEAD = [
  "When you submit, give the pull request's description with it. It is published as you write it, as",
  "the description of the pull request the repository's maintainers review: write it for them, plainly,",
];
const REQUEST_TAIL =
  "The pull request's link to the issue (Fixes #N) and the test results are added for you: leave them out.";
