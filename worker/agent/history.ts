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

import type { ChatMessage } from "../../src/contracts.js";
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
 * Why a view collapses before its turn: the file was edited under it since (what it shows is gone), or
 * a later view shows the same lines again (it says nothing the history does not hold further on).
 */
type Outdated = "edited" | "shown_again";

/**
 * An old output cut to its first and last lines, saying how much was left out and how to see it again;
 * an outdated view says why: the file was edited since (and how to see those lines as they are now), or
 * the lines are shown again further on.
 */
export function collapsedText(content: string, outdated: Outdated | null = null): string {
  const body = withoutFooter(content);
  const lines = body.split("\n");
  const file = viewedFile(body);
  const firstLine = lines.find((line) => /^\d+:/.test(line))?.split(":")[0];
  const open = `open ${file}${firstLine ? ` ${firstLine}` : ""}`;
  const again = !file
    ? "run the command again to see it"
    : outdated === "edited"
      ? `the file was edited since: ${open} to see it as it is now`
      : outdated === "shown_again"
        ? "the same lines are shown again further on"
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
  /**
   * A view of a file that a later edit changed at or above its last line (what it shows is gone), or
   * whose lines a later view of the file shows again; null: neither.
   */
  outdated: Outdated | null;
}

/** The first and last line numbers a view shows (the viewer's `N:` lines), if it shows any. */
function shownLines(body: string): { first: number; last: number } | null {
  const numbers = [...body.matchAll(/^(\d+):/gm)].map((match) => Number(match[1]));
  return numbers.length > 0 ? { first: Math.min(...numbers), last: Math.max(...numbers) } : null;
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
  const views: { observation: Observation; file: string; first: number; last: number; edit: boolean }[] = [];
  entries.forEach((entry, index) => {
    if (entry.kind !== "observation") return;
    const content = entry.message.content ?? "";
    const body = withoutFooter(content);
    const file = viewedFile(body);
    const change = editedFile(body);
    const observation: Observation = {
      index,
      content,
      collapsible: body.split("\n").length > shortLines,
      outdated: null,
    };
    if (change) {
      edited.add(change);
      // Lines from the edit's first on changed or moved: earlier views showing them show what is gone.
      const start = editStart(body);
      if (start !== null)
        for (const view of views)
          if (view.file === change && view.last >= start) view.observation.outdated = "edited";
    }
    if (file) latest.set(`file:${file}`, index);
    const shown = file ? shownLines(body) : null;
    if (file && shown) {
      // An earlier window of these lines says nothing this one does not (an edit's answer, which also
      // says what the edit removed, stays); one the file was edited under since is outdated already.
      for (const view of views)
        if (
          view.file === file &&
          !view.edit &&
          view.observation.outdated === null &&
          view.first >= shown.first &&
          view.last <= shown.last
        )
          view.observation.outdated = "shown_again";
      views.push({ observation, file, ...shown, edit: change !== null });
    }
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
 * the collapse point, and (but with `full`) every outdated view, wherever it is (issue 27: a window the
 * model edited under, or opened again, was sent again in every request).
 */
export function collapsedIndexes(entries: readonly HistoryEntry[], options: HistoryOptions): Set<number> {
  return new Set(collapsedOf(entries, options).keys());
}

/** The observations collapsed in the next request, by index, with why a view collapsed before its turn. */
function collapsedOf(
  entries: readonly HistoryEntry[],
  options: HistoryOptions,
): Map<number, Outdated | null> {
  const observations = observationsOf(entries, options);
  const point = collapsePoint(observations, options);
  const outdatedCollapse = options.processor !== "full";
  const collapsed = new Map<number, Outdated | null>();
  observations.forEach((o, i) => {
    if (!o.collapsible) return;
    if (outdatedCollapse && o.outdated) collapsed.set(o.index, o.outdated);
    else if (i < point) collapsed.set(o.index, null);
  });
  return collapsed;
}

/**
 * The messages of the next request. Only the newest observation keeps the state lines the ACI ends
 * each one with (open file, current directory): an older one's say what held then, and repeating them
 * in every request cost tokens for nothing (issue 27). The newest loses them once it is no longer the
 * newest, at the end of what the next request shares with it, so the prompt's prefix stays put.
 */
export function processHistory(entries: readonly HistoryEntry[], options: HistoryOptions): ChatMessage[] {
  const collapsed = collapsedOf(entries, options);
  const newest = entries.findLastIndex((entry) => entry.kind === "observation");
  return entries.map(({ kind, message }, index) => {
    if (collapsed.has(index))
      return {
        ...message,
        content: collapsedText(message.content ?? "", collapsed.get(index)),
      } as ChatMessage;
    if (kind === "observation" && index !== newest)
      return { ...message, content: withoutFooter(message.content ?? "") } as ChatMessage;
    return message;
  });
}
