import { describe, expect, it } from "vitest";
import { fixBranch, issueOfFixBranch } from "../../../../src/shared/fix-branch.js";

describe("the fix branch name", () => {
  it("is agent-fix/issue-N, and reads back as N", () => {
    expect(fixBranch(7)).toBe("agent-fix/issue-7");
    expect(issueOfFixBranch(fixBranch(1234))).toBe(1234);
  });

  it("reads no issue from any other branch name", () => {
    for (const ref of [
      "main",
      "agent-fix/issue-",
      "agent-fix/issue-7x",
      "agent-fix/issue-7/more",
      "agent-fix/issue--7",
      "agent-fix/issue- 7",
      "other/agent-fix/issue-7",
      "Agent-Fix/issue-7",
    ]) {
      expect(issueOfFixBranch(ref), ref).toBeNull();
    }
  });
});
