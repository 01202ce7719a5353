import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker; GitHub is the stand-in, the model a replay.
// The pull request is written for its reviewer (issue 24): its body is the description the model was
// asked for, in the repository's template when it has one, never its reply to the review checklist.
const ready = (await requireRedis()) && (await requireSandboxImage());

const TEMPLATE = [
  "## Summary",
  "<!-- What does this change, and why? -->",
  "",
  "## Type of change",
  "- [ ] Bug fix",
  "- [ ] New feature",
  "",
  "## Tests",
  "<!-- How was it tested? -->",
  "",
].join("\n");

describe.runIf(ready)("the pull request's description", () => {
  const stack = new Stack({ model: null });
  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  /** Labels an issue of a new sample repository and waits for its pull request. */
  const run = async (name: string, files: Record<string, string>) => {
    const issue: IssueRef = stack.addIssue(await stack.addSampleRepo(name, files));
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor("the final status", () => stack.finalStatus(issue), 240_000);
    expect(status.body).toContain("opened draft pull request #");
    const pr = stack.pulls(issue)[0]!;
    const [summary] = stack.github.state.commentsOn(issue.owner, issue.repo, pr.number);
    const link = /\[Full trajectory\]\((\S+)\)/.exec(summary!.body)?.[1];
    const served = await fetch(`${link!}&format=json`);
    const trajectory = (await served.json()) as {
      info: { description?: string; pull_request_template?: string };
      history: { role: string; content: string | null }[];
    };
    return { pr, summary: summary!.body, trajectory };
  };

  it("is the repository's template as the model filled it in, with the app's parts outside it", async () => {
    const { pr, summary, trajectory } = await run("templated", {
      ...sampleConfig("sample-median-template.jsonl"),
      ".github/pull_request_template.md": TEMPLATE,
    });
    // The model was shown the template, read from the default branch, in the review that asked for it.
    expect(trajectory.info.pull_request_template).toBe(".github/pull_request_template.md");
    const review = trajectory.history.find(
      (m) => m.role === "tool" && m.content?.includes("<pull_request_template>"),
    );
    expect(review?.content).toContain(
      `<pull_request_template>\n${TEMPLATE.trim()}\n</pull_request_template>`,
    );
    expect(review?.content).toContain("Give it in submit's `description` argument.");
    // The body: the filled template first (its HTML comments left out), then the app's own parts.
    expect(pr.body.startsWith("## Summary\nmedian() returned the upper of the two middle values")).toBe(true);
    expect(pr.body).toContain("## Type of change\n- [x] Bug fix\n- [ ] New feature\n\n## Tests\n");
    expect(pr.body).not.toContain("<!--");
    expect(pr.body).not.toContain("Filling in the repository's template.");
    expect(pr.body.indexOf("Fixes #1")).toBeGreaterThan(pr.body.indexOf("## Tests"));
    expect(pr.body.indexOf("## How this was tested")).toBeGreaterThan(pr.body.indexOf("Fixes #1"));
    // A regression test added beside the old ones raises no warning.
    expect(pr.body).not.toContain("Changes to existing tests");
    expect(pr.body).toContain("Tests added: `test_even_length (tests/test_stats.py)`.");
    // The summary's step table shows the test run's result, not its first line.
    expect(summary).toMatch(
      /\| `bash` \| command=python3 -m unittest discover -s tests \| Ran \d+ tests in [\d.]+s: OK \|/,
    );
  });

  it("without a description from the model, is built from the run's facts, never the confirming thought", async () => {
    const { pr, trajectory } = await run("undescribed", sampleConfig("trivial-fix.jsonl"));
    expect(trajectory.info.description).toBeUndefined();
    expect(pr.body).not.toContain("FIXED.txt now exists, as the issue asked.");
    expect(
      pr.body.startsWith(
        [
          "_The agent gave no description of its change; this one is built from the run._",
          "",
          "This change is for the issue “median() is wrong for an even number of values”.",
          "It changes one file: `FIXED.txt`.",
          "",
          "Fixes #1",
        ].join("\n"),
      ),
    ).toBe(true);
  });
});
