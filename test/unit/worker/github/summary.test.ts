import { describe, expect, it } from "vitest";
import type { Trajectory, TrajectoryStep } from "../../../../src/shared/contracts.js";
import { fitComment, GITHUB_BODY_LIMIT } from "../../../../src/shared/github/limits.js";
import { renderStatus } from "../../../../src/shared/github/status.js";
import { renderPullRequestBody } from "../../../../worker/github/pr-body.js";
import { renderTrajectorySummary } from "../../../../worker/github/summary.js";

function step(i: number, size = 40): TrajectoryStep {
  return {
    thought: `Thought ${i}: ${"t".repeat(size)}`,
    action: `open src/a.py ${i}`,
    observation: `[File: src/a.py (10 lines total)]\n${"o".repeat(size)}`,
    response: "",
    execution_time: 0.25,
    state: { open_file: "src/a.py", working_dir: "/workspace" },
    tool: "open",
    args: { path: "src/a|b.py", line: i },
    tokens: { sent: 100, received: 10 },
  };
}

function trajectory(steps: TrajectoryStep[]): Trajectory {
  return {
    trajectory: steps,
    history: [],
    info: {
      exit_status: "submitted",
      submission: "diff",
      model_stats: {
        tokens_sent: 12_345,
        tokens_received: 678,
        api_calls: steps.length,
        instance_cost: 0.1234,
      },
      gate: [
        { attempt: 1, passed: false, output: "", durationMs: 1 },
        { attempt: 2, passed: true, output: "", durationMs: 1 },
      ],
      model: "replay:demo.traj",
      config_hash: "h",
      tool_bundle: "default",
      aci_version: "1",
      sandbox_image: "img",
      started_at: "2026-11-30T10:00:00.000Z",
      finished_at: "2026-11-30T10:02:05.000Z",
    },
  };
}

describe("trajectory summary", () => {
  it("shows outcome, model, steps, tokens, cost, wall time, tests before/after, a step table and thoughts", () => {
    const text = renderTrajectorySummary(trajectory([step(1), step(2)]), { testsBefore: false });
    expect(text).toContain("| Outcome | `submitted` |");
    expect(text).toContain("| Model | `replay:demo.traj` |");
    expect(text).toContain("| Steps | 2 |");
    expect(text).toContain("12,345 sent, 678 received");
    expect(text).toContain("$0.1234");
    expect(text).toContain("| Wall time | 2 min 5 s |");
    expect(text).toContain("| Tests before | ❌ failed |");
    expect(text).toContain("| Tests after | ✅ passed (2 gate runs) |");
    // Pipes in arguments are escaped so the table keeps its columns.
    expect(text).toContain(
      "| 2 | `open` | path=src/a\\|b.py line=2 | [File: src/a.py (10 lines total)] | 0.3 s |",
    );
    expect(text).toMatch(
      /<details><summary>Thoughts \(2 of 2\)<\/summary>[\s\S]*Thought 1[\s\S]*<\/details>/,
    );
    expect(text).not.toContain("Cut to fit");
  });

  it("fits GitHub's limit with a note, keeping the details block closed", () => {
    const steps = Array.from({ length: 400 }, (_, i) => step(i, 2_000));
    const text = renderTrajectorySummary(trajectory(steps), { trajectoryUrl: "https://x/t/1" });
    expect(text.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(text).toMatch(
      /Cut to fit GitHub's 65,536-character limit: \d+ step rows and \d+ thoughts left out/,
    );
    expect(text).toContain("[Full trajectory](https://x/t/1)");
    expect(text.split("<details>").length).toBe(text.split("</details>").length);
    expect(text).toContain("| 1 | `open` |");
  });

  it("cuts any comment to the limit and closes an open code fence", () => {
    const long = `\`\`\`\n${"x".repeat(70_000)}`;
    const cut = fitComment(long);
    expect(cut.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(cut).toMatch(/```\n\n_…cut to fit GitHub's 65,536-character limit._$/);
    expect(fitComment("short")).toBe("short");
  });
});

describe("status comment and PR body", () => {
  it("renders each state of the status comment", () => {
    const context = { requestedBy: "alice" };
    const progress = renderStatus({ kind: "progress", phase: "agent", step: 3, maxSteps: 40 }, context);
    expect(progress).toContain("<!-- agent-fix:status -->");
    expect(progress).toContain("- [x] Setting up");
    expect(progress).toContain("- [ ] **Working on a fix: step 3 of at most 40** ⏳");
    expect(
      renderStatus({ kind: "succeeded", pullRequest: { number: 9, url: "https://x/pull/9" } }, context),
    ).toContain("opened draft pull request #9: https://x/pull/9");
    // A review run opened nothing: its headline says what it pushed, and where.
    const review = renderStatus(
      { kind: "succeeded", pullRequest: { number: 9, url: "https://x/pull/9" }, review: true },
      context,
    );
    expect(review).toContain(
      "✅ **agent-fix** pushed a commit addressing the review to pull request #9: https://x/pull/9",
    );
    expect(review).not.toContain("opened draft pull request");
    expect(
      renderStatus({ kind: "failed", reason: "The tests still fail after 3 attempts." }, context),
    ).toContain("**Why:** The tests still fail after 3 attempts.");
    expect(renderStatus({ kind: "cancelled", by: "bob", reason: "label removed" }, context)).toContain(
      "cancelled by @bob (label removed)",
    );
  });

  it("writes Fixes #N, how it was tested and the fails-before/passes-after proof", () => {
    const body = renderPullRequestBody({
      issueNumber: 12,
      issueTitle: "An issue",
      description: "Guard against an empty list in `mean()`.",
      patch: "",
      testCommand: "pytest -q",
      baselinePassed: true,
      gateAttempts: 2,
      proof: { testFiles: ["tests/test_mean.py"], failedBefore: true, passedAfter: true },
      model: "openai:gpt-4.1",
    });
    expect(body).toContain("Fixes #12");
    expect(body).toContain("`pytest -q` with this change: passed (after 2 attempts)");
    expect(body).toContain("| result | ❌ failed | ✅ passed |");
    const weak = renderPullRequestBody({
      issueNumber: 1,
      issueTitle: "An issue",
      description: "x",
      patch: "",
      testCommand: "npm test",
      baselinePassed: false,
      gateAttempts: 1,
      proof: { testFiles: ["a.test.ts"], failedBefore: false, passedAfter: true },
      model: "m",
    });
    expect(weak).toContain("did **not** fail on the unchanged code");
    expect(weak).toContain("already failed before this change");
  });
});
