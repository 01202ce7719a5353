/**
 * Where a request's prompt tokens go (bench:tokens): the system prompt, the tool definitions sent with
 * it, the task (the issue, and a demonstration if any), the history of earlier turns as the history
 * processor kept them (the model's own calls apart from the environment's answers), and the newest
 * observation, the answer to the model's last call. The parts add up to the request's whole prompt.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { ChatMessage, FunctionSpec } from "../src/shared/contracts.js";
import { estimateMessageTokens, estimateTextTokens } from "../worker/model/tokens.js";

export const PROMPT_PARTS = ["system", "tools", "task", "actions", "observations", "newest"] as const;
export type PromptPart = (typeof PROMPT_PARTS)[number];
export type PromptSplit = Record<PromptPart, number>;

/** How a count is taken: of one message, and of the tool definitions. */
export interface TokenCounter {
  name: string;
  message(message: ChatMessage): number;
  tools(tools: readonly FunctionSpec[]): number;
}

/** worker/model/tokens.ts's estimate (characters / 4), as the loop's limits and the replay model count. */
export const estimated: TokenCounter = {
  name: "chars/4",
  message: estimateMessageTokens,
  tools: (tools) => (tools.length > 0 ? estimateTextTokens(JSON.stringify(tools)) : 0),
};

/**
 * gpt-4.1's tokenizer (o200k_base, the gpt-tokenizer package): the content and the calls' JSON, and
 * the 3 tokens of framing OpenAI's guide counts per message. The tool definitions are counted as their
 * JSON; the API renders them in a form of its own, so that part is close rather than exact.
 */
export const o200k: TokenCounter = {
  name: "o200k_base",
  message: (message) => {
    const calls =
      message.role === "assistant" && message.tool_calls ? JSON.stringify(message.tool_calls) : "";
    return countTokens((message.content ?? "") + calls) + 3;
  },
  tools: (tools) => (tools.length > 0 ? countTokens(JSON.stringify(tools)) : 0),
};

export function emptySplit(): PromptSplit {
  return { system: 0, tools: 0, task: 0, actions: 0, observations: 0, newest: 0 };
}

export function addSplit(total: PromptSplit, split: PromptSplit): PromptSplit {
  for (const part of PROMPT_PARTS) total[part] += split[part];
  return total;
}

export function splitTotal(split: PromptSplit): number {
  return PROMPT_PARTS.reduce((sum, part) => sum + split[part], 0);
}

/**
 * The request's tokens by part. The task is every user message before the model's first reply; after
 * it, assistant messages are actions and the others observations, but for the last message, which is
 * the newest observation once the model has replied at least once.
 */
export function splitPrompt(
  messages: readonly ChatMessage[],
  tools: readonly FunctionSpec[],
  counter: TokenCounter,
): PromptSplit {
  const split = emptySplit();
  split.tools = counter.tools(tools);
  const firstReply = messages.findIndex((message) => message.role === "assistant");
  messages.forEach((message, index) => {
    const tokens = counter.message(message);
    if (message.role === "system") split.system += tokens;
    else if (firstReply === -1 || index < firstReply) split.task += tokens;
    else if (index === messages.length - 1 && message.role !== "assistant") split.newest += tokens;
    else if (message.role === "assistant") split.actions += tokens;
    else split.observations += tokens;
  });
  return split;
}
