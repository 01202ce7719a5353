/**
 * What the model sees of the past. The loop keeps every message; before each request a processor
 * collapses old observations to their first and last lines and a note on how to see them again.
 * - `full`: nothing collapsed.
 * - `last_n`: all but the last `keepLast` observations collapsed (SWE-agent's default); the collapse
 *   point moves every turn, so the prompt prefix changes every turn and prompt caches miss.
 * - `block`: observations older than `keepLast` collapse `blockSize` at a time, and only once the
 *   observations would exceed `budgetTokens`: the prompt stays byte-identical from its start between
 *   collapses, so prompt caches hit, and nothing is collapsed while the history is small.
 * Never collapsed (issue 12): outputs of at most `shortOutputLines` lines, the latest view of every
 * file the model has edited, and the last output of each test command. Every observation but the
 * newest loses the ACI's state lines.
 */

import type { ChatMessage } from "../../src/shared/contracts.js";
import type { HistoryProcessorName } from "../config/agent.js";
import { estimateTextTokens as estimateTokens } from "../model/tokens.js";
import { editedFile, isTestRun, shellCommand, viewedFile, withoutFooter } from "./history-roles.js";

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
  /** `block`: estimated tokens the observations may hold before older ones collapse. */
  budgetTokens?: number;
  /** Outputs of at most this many lines are never collapsed. */
  shortOutputLines?: number;
  /** The gate's command: its runs count as test runs. */
  testCommand?: string | undefined;
}

const keptLines = 2;

/**
 * An old output cut to its first and last lines, saying how much was left out and how to see it again;
 * a view of a file edited since says so, and how to see those lines as they are now.
 */
export function collapsedText(content: string, editedSince = false): string {
  const body = withoutFooter(content);
  const lines = body.split("\n");
  const file = viewedFile(body);
  const firstLine = lines.find((line) => /^\d+:/.test(line))?.split(":")[0];
  const open = `open ${file}${firstLine ? ` ${firstLine}` : ""}`;
  const again = !file
    ? "run the command again to see it"
    : editedSince
      ? `the file was edited since: ${open} to see it as it is now`
      : `${open} to see it again`;
  if (lines.length <= 2 * keptLines + 1) return `Old environment output (${again}):\n${body}`;
  const omitted = lines.length - 2 * keptLines;
  return [
    `Old environment output, collapsed (${lines.length} lines; ${again}):`,
    ...lines.slice(0, keptLines),
    `[... ${omitted} lines omitted ...]`,
    ...lines.slice(-keptLines),
  ].join("\n");
}

interface Observation {
  index: number;
  content: string;
  collapsible: boolean;
  /** A view of a file that a later edit changed at or above its last line: what it shows is gone. */
  stale: boolean;
}

/** The last line number a view shows (the viewer's `N:` lines), if it shows any. */
function lastShownLine(body: string): number | null {
  const numbers = [...body.matchAll(/^(\d+):/gm)].map((match) => Number(match[1]));
  return numbers.length > 0 ? Math.max(...numbers) : null;
}

/** The first line an accepted `edit` changed, from its "File updated" line. */
function editStart(body: string): number | null {
  const match =
    /^File updated: (?:lines removed before line|the edited line is now line|the edited lines are now) (\d+)/m.exec(
      body,
    );
  return match ? Number(match[1]) : null;
}

/** The observations of the history, each marked whether it may be collapsed at all. */
function observationsOf(entries: readonly HistoryEntry[], options: HistoryOptions): Observation[] {
  const shortLines = options.shortOutputLines ?? 8;
  const latest = new Map<string, number>();
  const edited = new Set<string>();
  const found: Observation[] = [];
  const views: { observation: Observation; file: string; last: number }[] = [];
  entries.forEach((entry, index) => {
    if (entry.kind !== "observation") return;
    const content = entry.message.content ?? "";
    const body = withoutFooter(content);
    const file = viewedFile(body);
    const change = editedFile(body);
    const observation = { index, content, collapsible: body.split("\n").length > shortLines, stale: false };
    if (change) {
      edited.add(change);
      // Lines from the edit's first on changed or moved: earlier views showing them show what is gone.
      const start = editStart(body);
      if (start !== null)
        for (const view of views)
          if (view.file === change && view.last >= start) view.observation.stale = true;
    }
    if (file) latest.set(`file:${file}`, index);
    const last = file ? lastShownLine(body) : null;
    if (file && last !== null) views.push({ observation, file, last });
    const command = shellCommand(entries[index - 1]?.message);
    if (command && isTestRun(command, options.testCommand)) latest.set(`test:${command}`, index);
    found.push(observation);
  });
  const kept = new Set<number>();
  for (const [key, index] of latest) {
    if (key.startsWith("test:") || edited.has(key.slice("file:".length))) kept.add(index);
  }
  for (const observation of found) if (kept.has(observation.index)) observation.collapsible = false;
  return found;
}

/** How many of the first observations lie before the collapse point (those collapsible are collapsed). */
function collapsePoint(observations: Observation[], options: HistoryOptions): number {
  const older = Math.max(0, observations.length - options.keepLast);
  switch (options.processor) {
    case "full":
      return 0;
    case "last_n":
      return older;
    case "block": {
      const budget = options.budgetTokens ?? 0;
      const full = observations.map((o) => estimateTokens(o.content));
      const saved = observations.map((o, i) =>
        o.collapsible ? full[i]! - estimateTokens(collapsedText(o.content)) : 0,
      );
      let total = full.reduce((sum, tokens) => sum + tokens, 0);
      let point = 0;
      // Whole blocks only, so the prefix stays put until the next block is collapsed.
      while (total > budget && point + options.blockSize <= older) {
        for (let i = point; i < point + options.blockSize; i++) total -= saved[i]!;
        point += options.blockSize;
      }
      return point;
    }
  }
}

/**
 * Indexes (into `entries`) of the observations that are collapsed in the next request: those before
 * the collapse point, and (but with `full`) every stale view, wherever it is (issue 27: a window the
 * model edited under was sent again in every request, with lines the file no longer has).
 */
export function collapsedIndexes(entries: readonly HistoryEntry[], options: HistoryOptions): Set<number> {
  const observations = observationsOf(entries, options);
  const point = collapsePoint(observations, options);
  const stale = options.processor !== "full";
  return new Set(
    observations.filter((o, i) => o.collapsible && (i < point || (stale && o.stale))).map((o) => o.index),
  );
}

/** Indexes of the stale views among the collapsed ones: their collapsed text says the file changed. */
function staleIndexes(entries: readonly HistoryEntry[], options: HistoryOptions): Set<number> {
  return new Set(
    observationsOf(entries, options)
      .filter((o) => o.stale)
      .map((o) => o.index),
  );
}

/**
 * The messages of the next request. Only the newest observation keeps the state lines the ACI ends
 * each one with (open file, current directory): an older one's say what held then, and repeating them
 * in every request cost tokens for nothing (issue 27). The newest loses them once it is no longer the
 * newest, at the end of what the next request shares with it, so the prompt's prefix stays put.
 */
export function processHistory(entries: readonly HistoryEntry[], options: HistoryOptions): ChatMessage[] {
  const collapsed = collapsedIndexes(entries, options);
  const stale = staleIndexes(entries, options);
  const newest = entries.findLastIndex((entry) => entry.kind === "observation");
  return entries.map(({ kind, message }, index) => {
    if (collapsed.has(index))
      return { ...message, content: collapsedText(message.content ?? "", stale.has(index)) } as ChatMessage;
    if (kind === "observation" && index !== newest)
      return { ...message, content: withoutFooter(message.content ?? "") } as ChatMessage;
    return message;
  });
}
