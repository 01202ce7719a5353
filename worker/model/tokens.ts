/**
 * Token estimates where no tokenizer is at hand (limits, the replay model, the history benchmark):
 * characters / 4, rounded up, over the JSON a request would carry. Consistent rather than exact:
 * OpenAI's tokenizers average about 4 characters per token on English text and code.
 */
import type { ChatMessage, FunctionSpec } from "../../src/shared/contracts.js";

const CHARS_PER_TOKEN = 4;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(message: ChatMessage): number {
  // Content and tool calls carry the weight; a few tokens of framing per message, as the APIs charge.
  const calls = message.role === "assistant" && message.tool_calls ? JSON.stringify(message.tool_calls) : "";
  return estimateTextTokens((message.content ?? "") + calls) + 4;
}

export function estimatePromptTokens(
  messages: readonly ChatMessage[],
  tools: readonly FunctionSpec[] = [],
): number {
  let total = tools.length > 0 ? estimateTextTokens(JSON.stringify(tools)) : 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}
