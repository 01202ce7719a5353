import { describe, expect, it } from "vitest";
import type { AssistantMessage, ChatMessage } from "../../../../src/shared/contracts.js";
import { collapsedText, type HistoryEntry, processHistory } from "../../../../worker/agent/history.js";

const footer = "(Open file: n/a)\n(Current directory: /workspace)";
const long = (n: number) =>
  `obs ${n}\n${Array.from({ length: 11 }, (_, k) => `line ${k + 2}`).join("\n")}\n${footer}`;

function call(name: string, args: Record<string, unknown>, id: string): AssistantMessage {
  return {
    role: "assistant",
    content: null,
    tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
  };
}

function conversation(observations: number, observation = long): HistoryEntry[] {
  const entries: HistoryEntry[] = [{ kind: "system", message: { role: "system", content: "sys" } }];
  for (let i = 1; i <= observations; i++) {
    entries.push({ kind: "action", message: call("bash", { command: `echo ${i}` }, `c${i}`) });
    entries.push({
      kind: "observation",
      message: { role: "tool", tool_call_id: `c${i}`, content: observation(i) },
    });
  }
  return entries;
}

const contents = (messages: ChatMessage[]) =>
  messages.filter((m) => m.role === "tool").map((m) => m.content ?? "");
const whole = (messages: ChatMessage[]) =>
  contents(messages)
    .filter((content) => content.startsWith("obs"))
    .map((content) => content.split("\n")[0]);

describe("history processors", () => {
  it("last_n keeps the last 5 whole; a collapsed output keeps its first and last lines and says how to see it", () => {
    const messages = processHistory(conversation(8), { processor: "last_n", keepLast: 5, blockSize: 10 });
    expect(whole(messages)).toEqual(["obs 4", "obs 5", "obs 6", "obs 7", "obs 8"]);
    expect(messages[2]).toEqual({
      role: "tool",
      tool_call_id: "c1",
      content:
        "Old environment output, collapsed (12 lines; run the command again to see it):\nobs 1\nline 2\n[... 8 lines omitted ...]\nline 11\nline 12",
    });
  });

  it("a file window collapses to its frame and says which open shows it again", () => {
    const view = `[File: src/a.py (300 lines total)]\n(39 more lines above)\n${Array.from({ length: 20 }, (_, k) => `${40 + k}:x = ${k}`).join("\n")}\n(241 more lines below)\n${footer}`;
    expect(collapsedText(view)).toBe(
      "Old environment output, collapsed (23 lines; open src/a.py 40 to see it again):\n[File: src/a.py (300 lines total)]\n(39 more lines above)\n[... 19 lines omitted ...]\n59:x = 19\n(241 more lines below)",
    );
  });

  it("never collapses an output of a few lines (a 5-line find_file result)", () => {
    const short = (n: number) => `obs ${n}\na\nb\nc\nd\n${footer}`;
    const messages = processHistory(conversation(12, short), {
      processor: "last_n",
      keepLast: 2,
      blockSize: 1,
    });
    expect(whole(messages)).toHaveLength(12);
  });

  it("keeps the latest view of every edited file and the last output of each test command", () => {
    const entries = conversation(1);
    const push = (action: AssistantMessage, content: string) => {
      const id = action.tool_calls![0]!.id;
      entries.push({ kind: "action", message: action });
      entries.push({ kind: "observation", message: { role: "tool", tool_call_id: id, content } });
    };
    const window = (label: string) =>
      `[File: src/a.py (300 lines total)]\n${Array.from({ length: 12 }, (_, k) => `${k + 1}:${label}`).join("\n")}`;
    push(call("open", { path: "src/a.py" }, "v1"), window("first view"));
    push(
      call("edit", { start_line: 1, end_line: 1, replacement_text: "x" }, "e0"),
      `${window("edited")}\nFile updated: the edited line is now line 1.`,
    );
    push(
      call("bash", { command: "python -m pytest tests -q" }, "t1"),
      `pytest run 1\n${"F\n".repeat(10)}1 failed`,
    );
    push(
      call("bash", { command: "python -m pytest tests -q" }, "t2"),
      `pytest run 2\n${"F\n".repeat(10)}1 passed`,
    );
    for (let i = 0; i < 6; i++) push(call("bash", { command: `echo ${i}` }, `e${i}`), long(100 + i));
    const messages = processHistory(entries, { processor: "last_n", keepLast: 2, blockSize: 1 });
    const texts = contents(messages);
    expect(texts.some((t) => t.includes("1:edited") && !t.startsWith("Old"))).toBe(true);
    expect(texts.some((t) => t.startsWith("pytest run 2"))).toBe(true);
    expect(texts.some((t) => t.startsWith("pytest run 1"))).toBe(false);
    expect(texts.some((t) => t.includes("5:first view"))).toBe(false);
  });

  it("only the newest observation keeps the state lines: older ones lose them, also with full history", () => {
    const messages = processHistory(conversation(3), { processor: "full", keepLast: 5, blockSize: 10 });
    expect(contents(messages).map((content) => content.endsWith(footer))).toEqual([false, false, true]);
    expect(contents(messages)[0]).toBe(long(1).replace(`\n${footer}`, ""));
  });

  it("a view the model edited under collapses at once and says the file changed; one above the edit stays", () => {
    const entries: HistoryEntry[] = [{ kind: "system", message: { role: "system", content: "sys" } }];
    const push = (action: AssistantMessage, content: string) => {
      const id = action.tool_calls![0]!.id;
      entries.push({ kind: "action", message: action });
      entries.push({ kind: "observation", message: { role: "tool", tool_call_id: id, content } });
    };
    const window = (from: number) =>
      `[File: src/a.py (300 lines total)]\n(${from - 1} more lines above)\n${Array.from({ length: 12 }, (_, k) => `${from + k}:line ${from + k}`).join("\n")}\n(${300 - from - 11} more lines below)\n${footer}`;
    push(call("open", { path: "src/a.py", line_number: 1 }, "v1"), window(1));
    push(call("goto", { line_number: 40 }, "v2"), window(40));
    push(
      call("edit", { start_line: 45, end_line: 45, replacement_text: "x" }, "e1"),
      `[File: src/a.py (300 lines total)]\n(41 more lines above)\n42:line 42\n43:line 43\n44:line 44\n45:x\n46:line 46\n(254 more lines below)\nFile updated: the edited line is now line 45.\n${footer}`,
    );
    const roomy = { processor: "block" as const, keepLast: 5, blockSize: 10, budgetTokens: 100_000 };
    const texts = contents(processHistory(entries, roomy));
    expect(texts[0]).toContain("1:line 1");
    expect(texts[0]).toContain("12:line 12");
    expect(texts[1]).toBe(
      "Old environment output, collapsed (15 lines; the file was edited since: open src/a.py 40 to see it as it is now):\n[File: src/a.py (300 lines total)]\n(39 more lines above)\n[... 11 lines omitted ...]\n51:line 51\n(249 more lines below)",
    );
    expect(texts[2]).toContain("45:x");
    expect(contents(processHistory(entries, { ...roomy, processor: "full" }))[1]).toContain("45:line 45");
  });

  it("full collapses nothing", () => {
    expect(
      whole(processHistory(conversation(8), { processor: "full", keepLast: 5, blockSize: 10 })),
    ).toHaveLength(8);
  });

  it("block collapses nothing under its token budget, then whole blocks, so the prefix stays put between them", () => {
    // Each observation is about 30 tokens.
    const roomy = { processor: "block" as const, keepLast: 2, blockSize: 4, budgetTokens: 10_000 };
    expect(whole(processHistory(conversation(20), roomy))).toHaveLength(20);
    const tight = { ...roomy, budgetTokens: 200 };
    const at10 = processHistory(conversation(10), tight);
    const at11 = processHistory(conversation(11), tight);
    // All that at10 sent is sent again, but the state lines of its newest observation, now an older one.
    const stateless = at10.map((m, i) =>
      i === at10.length - 1 ? { ...m, content: m.content!.replace(`\n${footer}`, "") } : m,
    );
    expect(at11.slice(0, at10.length)).toEqual(stateless);
    expect(whole(at10)).toEqual(["obs 9", "obs 10"]);
    expect(whole(processHistory(conversation(7), tight))).toEqual(["obs 5", "obs 6", "obs 7"]);
  });

  it("does not change the entries it is given", () => {
    const entries = conversation(7);
    processHistory(entries, { processor: "last_n", keepLast: 1, blockSize: 1 });
    expect(entries[2]!.message.content).toBe(long(1));
  });
});
