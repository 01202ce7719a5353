import { describe, expect, it } from "vitest";
import { fromBot } from "../../../../../src/server/handlers/deps.js";
import { parseCommand } from "../../../../../src/server/handlers/issue-comment-created.js";

describe("comment commands", () => {
  it("recognises the command on the first non-empty line only", () => {
    expect(parseCommand("/agent-fix", "/agent-fix")).toBe("start");
    expect(parseCommand("\n  /agent-fix  \nplease", "/agent-fix")).toBe("start");
    expect(parseCommand("/agent-fix stop", "/agent-fix")).toBe("stop");
    expect(parseCommand("/agent-fix   stop\n", "/agent-fix")).toBe("stop");
    expect(parseCommand("/agent-fix please", "/agent-fix")).toBeNull();
    expect(parseCommand("/agent-fixer", "/agent-fix")).toBeNull();
    expect(parseCommand("Try /agent-fix", "/agent-fix")).toBeNull();
    expect(parseCommand("> /agent-fix", "/agent-fix")).toBeNull();
    expect(parseCommand("/fix", "/fix")).toBe("start");
    expect(parseCommand("/agent-fix rebase", "/agent-fix")).toBe("rebase");
    expect(parseCommand("\n/agent-fix  rebase\nthanks", "/agent-fix")).toBe("rebase");
    expect(parseCommand("/agent-fix rebase now", "/agent-fix")).toBeNull();
  });

  it("recognises help and status, which only answer", () => {
    expect(parseCommand("/agent-fix help", "/agent-fix")).toBe("help");
    expect(parseCommand("\n/agent-fix  status\nhow is it going?", "/agent-fix")).toBe("status");
    expect(parseCommand("/agent-fix status please", "/agent-fix")).toBeNull();
    expect(parseCommand("/agent-fix Help", "/agent-fix")).toBeNull();
  });

  it("treats bots, the app itself included, as bots", () => {
    expect(fromBot({ type: "Bot", login: "agent-fix[bot]" })).toBe(true);
    expect(fromBot({ type: "User", login: "dependabot[bot]" })).toBe(true);
    expect(fromBot({ type: "User", login: "alice" })).toBe(false);
  });
});
