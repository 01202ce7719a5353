import { describe, expect, it } from "vitest";
import { renderStatus } from "../../../../../src/shared/github/status.js";

const note =
  "No test command in .github/agent-fix.yml, so agent-fix found one:\n- node in `/`\n```yaml\ntest:\n  command: npm test\n```";

describe("the status comment says where the run's settings came from", () => {
  it("in progress and in every final state, before the trajectory link", () => {
    const context = { requestedBy: "alice", configNote: note, trajectoryUrl: "https://x/t.traj" };
    const progress = renderStatus({ kind: "progress", phase: "setting_up" }, context);
    expect(progress).toContain(note);
    const done = renderStatus(
      { kind: "succeeded", pullRequest: { number: 2, url: "https://x/pull/2" } },
      context,
    );
    expect(done.indexOf(note)).toBeGreaterThan(done.indexOf("opened draft pull request #2"));
    expect(done.indexOf(note)).toBeLessThan(done.indexOf("[Full trajectory]"));
    expect(renderStatus({ kind: "failed", reason: "tests failed" }, context)).toContain(note);
  });
  it("says nothing about it when the repository's own file set everything", () => {
    expect(renderStatus({ kind: "progress", phase: "setting_up" }, { requestedBy: "alice" })).not.toContain(
      "agent-fix.yml",
    );
  });
});
