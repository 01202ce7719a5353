import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../src/contracts.js";
import { collapsedCount, type HistoryEntry, processHistory } from "../../../worker/agent/history.js";

function conversation(observations: number): HistoryEntry[] {
  const entries: HistoryEntry[] = [{ kind: "system", message: { role: "system", content: "sys" } }];
  for (let i = 1; i <= observations; i++) {
    entries.push({ kind: "action", message: { role: "assistant", content: `act ${i}` } });
    entries.push({ kind: "observation", message: { role: "user", content: `obs ${i}\nline 2\nline 3` } });
  }
  return entries;
}

const whole = (messages: ChatMessage[]) =>
  messages
    .map((m) => (m.role === "user" ? m.content : ""))
    .filter((content) => content.startsWith("obs"))
    .map((content) => content.split("\n")[0]);

describe("history processors", () => {
  it("last_n keeps the last 5 observations whole and collapses the rest with their line count", () => {
    const messages = processHistory(conversation(8), { processor: "last_n", keepLast: 5, blockSize: 10 });
    expect(whole(messages)).toEqual(["obs 4", "obs 5", "obs 6", "obs 7", "obs 8"]);
    expect(messages[2]).toEqual({ role: "user", content: "Old environment output: (3 lines omitted)" });
    expect(messages[1]).toEqual({ role: "assistant", content: "act 1" });
  });

  it("full collapses nothing", () => {
    expect(
      whole(processHistory(conversation(8), { processor: "full", keepLast: 5, blockSize: 10 })),
    ).toHaveLength(8);
  });

  it("block collapses in whole blocks, so the prefix stays the same between block boundaries", () => {
    const options = { processor: "block" as const, keepLast: 5, blockSize: 4 };
    expect([5, 8, 9, 12, 13].map((n) => collapsedCount(n, options))).toEqual([0, 0, 4, 4, 8]);
    const at10 = processHistory(conversation(10), options);
    const at11 = processHistory(conversation(11), options);
    expect(at11.slice(0, at10.length)).toEqual(at10);
    expect(whole(at11)).toEqual(["obs 5", "obs 6", "obs 7", "obs 8", "obs 9", "obs 10", "obs 11"]);
  });

  it("does not change the entries it is given", () => {
    const entries = conversation(7);
    processHistory(entries, { processor: "last_n", keepLast: 1, blockSize: 1 });
    expect(entries[2]!.message.content).toBe("obs 1\nline 2\nline 3");
  });
});
