import { describe, expect, it } from "vitest";
import { estimated, o200k, splitPrompt, splitTotal } from "../../../bench/prompt-split.js";
import type { ChatMessage, FunctionSpec } from "../../../src/shared/contracts.js";
import { estimatePromptTokens } from "../../../worker/model/tokens.js";

const tools: FunctionSpec[] = [
  { name: "open", description: "Opens a file.", parameters: { type: "object", properties: {} } },
];
const call = (id: string, content: string): ChatMessage => ({
  role: "assistant",
  content,
  tool_calls: [{ id, type: "function", function: { name: "open", arguments: '{"path":"a.py"}' } }],
});

const request: ChatMessage[] = [
  { role: "system", content: "You are a programmer. ".repeat(20) },
  { role: "user", content: "The issue: mean() crashes on an empty list. ".repeat(5) },
  call("c1", "Look at mean()."),
  {
    role: "tool",
    tool_call_id: "c1",
    content: "1:def mean(values):\n2:    return sum(values) / len(values)",
  },
  call("c2", "Open the tests."),
  { role: "tool", tool_call_id: "c2", content: "1:import unittest\n".repeat(30) },
];

describe("splitPrompt (bench:tokens)", () => {
  it("puts each message in its part, and the parts add up to the loop's own estimate", () => {
    const split = splitPrompt(request, tools, estimated);
    expect(split.system).toBe(estimated.message(request[0]!));
    expect(split.task).toBe(estimated.message(request[1]!));
    expect(split.actions).toBe(estimated.message(request[2]!) + estimated.message(request[4]!));
    expect(split.observations).toBe(estimated.message(request[3]!));
    expect(split.newest).toBe(estimated.message(request[5]!));
    expect(split.tools).toBeGreaterThan(0);
    expect(splitTotal(split)).toBe(estimatePromptTokens(request, tools));
  });

  it("the first request has no newest observation: the issue is the task", () => {
    const split = splitPrompt(request.slice(0, 2), [], o200k);
    expect(split.newest).toBe(0);
    expect(split.tools).toBe(0);
    expect(split.task).toBe(o200k.message(request[1]!));
  });

  it("o200k_base counts gpt-4.1's tokens, 3 of framing a message, where chars/4 guesses", () => {
    const line: ChatMessage = {
      role: "user",
      content: "def median(values):\n    return sorted(values)[len(values)//2]\n",
    };
    expect(o200k.message(line)).toBe(14 + 3);
    expect(estimated.message(line)).toBe(Math.ceil(62 / 4) + 4);
  });
});
