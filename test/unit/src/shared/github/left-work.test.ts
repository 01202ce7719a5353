import { describe, expect, it } from "vitest";
import { fenceFor, type LeftWork, testTail } from "../../../../../src/shared/github/left-work.js";
import { GITHUB_BODY_LIMIT, githubLength, TRUNCATION_NOTE } from "../../../../../src/shared/github/limits.js";
import { ZERO_WIDTH_JOINER } from "../../../../../src/shared/github/neutralise.js";
import { renderStatus } from "../../../../../src/shared/github/status.js";

/** No lone half of a surrogate pair anywhere in `text`. */
const wellFormed = (text: string) =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

const context = { requestedBy: "maintainer", trajectoryUrl: "http://127.0.0.1:1/trajectories/t.traj" };

function work(patch: string, tail = "Ran 3 tests\n\nOK"): LeftWork {
  return {
    exitStatus: "exit_step_limit",
    testCommand: "python3 -m unittest",
    diff: { kind: "shown", patch },
    tests: { kind: "ran", passed: true, exitCode: 0, timedOut: false, tail },
  };
}

const failed = (left: LeftWork, summary = "## agent-fix trajectory\n\n(summary)") =>
  renderStatus({ kind: "failed", reason: "The agent reached its step limit.", summary, work: left }, context);

/** The text between the diff's opening fence and its closing one. */
function shownDiff(body: string): { fence: string; text: string } {
  const open = /^(`{3,})diff$/m.exec(body);
  if (!open?.[1]) throw new Error("no diff fence");
  const fence = open[1];
  const start = open.index + open[0].length + 1;
  const end = body.indexOf(`\n${fence}\n`, start);
  return { fence, text: body.slice(start, end) };
}

describe("the unfinished work in the final status comment", () => {
  it("a huge diff of emoji lines is cut at a line end to fit, says so, and keeps what follows it", () => {
    const lines = ["diff --git a/big.txt b/big.txt", "--- a/big.txt", "+++ b/big.txt", "@@ -0,0 +1,9000 @@"];
    for (let i = 0; i < 9_000; i++) lines.push(`+line ${i} 😀𝄞 ${"x".repeat(i % 7)}`);
    const patch = lines.join("\n");
    expect(githubLength(patch)).toBeGreaterThan(GITHUB_BODY_LIMIT * 2);

    const body = failed(work(patch), `## agent-fix trajectory\n\n${"s".repeat(15_000)}`);
    expect(githubLength(body)).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    // Sized by the section itself, not cut blindly by the last-resort cut at the end.
    expect(body).not.toContain(TRUNCATION_NOTE);
    expect(wellFormed(body)).toBe(true);
    const { text } = shownDiff(body);
    // Whole lines only, the first ones, and most of the room used.
    expect(patch.startsWith(`${text}\n`)).toBe(true);
    const shown = text.split("\n").length;
    expect(body).toContain(`lines shown`);
    expect(body).toContain(
      `${shown.toLocaleString("en-US")} of ${lines.length.toLocaleString("en-US")} lines shown`,
    );
    expect(githubLength(text)).toBeGreaterThan(GITHUB_BODY_LIMIT - 20_000);
    // What comes after the diff survives: how to continue, the summary, the trajectory link.
    expect(body).toContain("**To continue:** comment `/agent-fix`");
    expect(body).toContain("`limits.maxSteps`");
    expect(body).toContain("s".repeat(15_000));
    expect(body).toContain(`[Full trajectory](${context.trajectoryUrl})`);
  });

  it("a diff holding ``` runs and emoji is shown whole in a longer fence, inside a collapsed block", () => {
    const patch = [
      "diff --git a/README.md b/README.md",
      "--- a/README.md",
      "+++ b/README.md",
      "@@ -1,2 +1,5 @@",
      " ```",
      "+`````js",
      "+const mood = '😀 🎉';",
      "+`````",
      " ```",
    ].join("\n");
    const body = failed(work(patch));
    const { fence, text } = shownDiff(body);
    expect(fence).toBe("``````");
    expect(text).toBe(patch);
    expect(body).not.toContain("lines shown");
    expect(body).toMatch(/<details><summary>The change \(1 file, \+3 −0\)<\/summary>\n\n``````diff\n/);
    expect(body).toContain("✅ `python3 -m unittest` passed (exit 0)");
    expect(fenceFor("no backticks")).toBe("```");
  });

  it("a failed test run shows its exit code and the last lines of its output, neutralised", () => {
    const left: LeftWork = {
      ...work("diff --git a/a b/a\n+x"),
      tests: {
        kind: "ran",
        passed: false,
        exitCode: 1,
        timedOut: false,
        tail: testTail(`${"noise\n".repeat(100)}FAILED (failures=1) cc @octo-org/team`),
      },
    };
    const body = failed(left);
    expect(body).toContain("❌ `python3 -m unittest` failed (exit 1)");
    expect(body).toContain("FAILED (failures=1)");
    expect(body).toContain(`@${ZERO_WIDTH_JOINER}octo-org/team`);
    expect(body.match(/noise/g)?.length).toBeLessThan(20);
  });

  it("a change holding a setup secret is withheld, naming the secret and not its value", () => {
    const left: LeftWork = { ...work("ignored"), diff: { kind: "withheld", secretNames: ["NPM_TOKEN"] } };
    const body = failed(left);
    expect(body).toContain("The diff is withheld: it holds the value of the setup secret(s) `NPM_TOKEN`");
    expect(body).not.toContain("ignored");
    expect(body).not.toMatch(/^`{3,}diff$/m);
  });
});
