import { describe, expect, it } from "vitest";
import {
  cutAt,
  fitComment,
  GITHUB_BODY_LIMIT,
  githubLength,
  TRUNCATION_NOTE,
} from "../../../../../src/shared/github/limits.js";
import { renderTrajectorySummary } from "../../../../../worker/github/summary.js";
import { submittedTrajectory } from "../../../../support/published.js";

/** No lone half of a surrogate pair anywhere in `text`. */
const wellFormed = (text: string) =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

// GitHub's body limit is 65,536 characters counted as code points; JavaScript counts UTF-16 units.
describe("GitHub's body limit", () => {
  it("counts an emoji as one character, as GitHub does", () => {
    expect(githubLength("a😀b")).toBe(3);
    expect(githubLength("😀".repeat(70_000))).toBe(70_000);
  });

  it("a body of emoji is cut to GitHub's limit, not to half of it, and never splits a pair", () => {
    const cut = fitComment("😀".repeat(70_000));
    expect(wellFormed(cut)).toBe(true);
    expect(cut.endsWith(TRUNCATION_NOTE)).toBe(true);
    expect(githubLength(cut)).toBe(GITHUB_BODY_LIMIT);
  });

  it("a pair straddling the cut is kept whole or left out, and open blocks are closed within the limit", () => {
    for (let shift = 0; shift < 4; shift++) {
      const text = `${"```\n"}${"x".repeat(GITHUB_BODY_LIMIT - 60 + shift)}${"𝄞".repeat(200)}`;
      const cut = fitComment(text);
      expect(wellFormed(cut)).toBe(true);
      expect(githubLength(cut)).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
      expect(cut).toContain("\n```\n\n_…cut");
    }
    expect(cutAt("ab😀c", 3)).toBe("ab😀");
    expect(cutAt("ab😀c", 2)).toBe("ab");
  });

  it("text that fits is left as it is, up to the last character GitHub allows", () => {
    const exact = "😀".repeat(GITHUB_BODY_LIMIT);
    expect(fitComment(exact)).toBe(exact);
    expect(fitComment("short")).toBe("short");
  });

  it("the trajectory summary cuts long cells without splitting a pair", () => {
    const trajectory = submittedTrajectory("done");
    const step = trajectory.trajectory[0]!;
    step.observation = "😀".repeat(300);
    step.args = { text: "😀".repeat(300) };
    const summary = renderTrajectorySummary(trajectory);
    expect(wellFormed(summary)).toBe(true);
    expect(summary).toContain("😀…");
  });
});
