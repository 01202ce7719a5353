/**
 * What the model sees of the past. The loop keeps every message; before each request a processor
 * collapses old observations to `Old environment output: (N lines omitted)`.
 * - `full`: nothing collapsed.
 * - `last_n`: all but the last `keepLast` observations collapsed (SWE-agent's default); the collapse
 *   point moves every turn, so the prompt prefix changes every turn and prompt caches miss.
 * - `block`: observations are collapsed `blockSize` at a time once they are older than `keepLast`, so the
 *   prompt stays byte-identical from its start for up to `blockSize` turns and prompt caches hit.
 */

import type { HistoryProcessorName } from "../../src/config/agent.js";
import type { ChatMessage } from "../../src/contracts.js";

/** `format_error` marks a malformed turn and our reply to it; they leave the history once the model recovers. */
export type HistoryKind = "system" | "demonstration" | "instance" | "action" | "observation" | "format_error";

export interface HistoryEntry {
  kind: HistoryKind;
  message: ChatMessage;
}

export interface HistoryOptions {
  processor: HistoryProcessorName;
  keepLast: number;
  blockSize: number;
}

export function collapsedText(content: string): string {
  return `Old environment output: (${content.split("\n").length} lines omitted)`;
}

/** How many of the first observations are collapsed, out of `count`. */
export function collapsedCount(count: number, options: HistoryOptions): number {
  const older = Math.max(0, count - options.keepLast);
  switch (options.processor) {
    case "full":
      return 0;
    case "last_n":
      return older;
    case "block":
      return Math.floor(older / options.blockSize) * options.blockSize;
  }
}

export function processHistory(entries: readonly HistoryEntry[], options: HistoryOptions): ChatMessage[] {
  const observations = entries.filter((entry) => entry.kind === "observation").length;
  let toCollapse = collapsedCount(observations, options);
  return entries.map(({ kind, message }) => {
    if (kind !== "observation" || toCollapse === 0) return message;
    toCollapse--;
    return { ...message, content: collapsedText(message.content ?? "") } as ChatMessage;
  });
}
