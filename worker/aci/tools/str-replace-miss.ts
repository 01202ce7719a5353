/**
 * Why a `str_replace` found nothing, when it can be told: old_str matches once the whitespace at the
 * start and end of its lines is ignored (tabs where the file has spaces, or the reverse, or another
 * depth), or else the lines of the file closest to it, with their numbers.
 */
import { distance } from "fastest-levenshtein";

type Indentation = "tabs" | "spaces";

/** Below this similarity (1 - edit distance / length) the closest lines are not worth showing. */
const minSimilarity = 0.5;
/** Past this much work (file characters x old_str characters) the closest lines are not searched. */
const maxComparisonWork = 50_000_000;

function indentationOf(lines: readonly string[]): Indentation | "mixed" | null {
  const kinds = new Set(
    lines.flatMap((line) => (line.startsWith("\t") ? ["tabs"] : line.startsWith(" ") ? ["spaces"] : [])),
  );
  if (kinds.size === 0) return null;
  return kinds.size === 1 ? ([...kinds][0] as Indentation) : "mixed";
}

/** Whether old_str's lines match the file's from `at` (0-based), whitespace at either end aside. */
function matchesLoosely(fileLines: readonly string[], at: number, oldLines: readonly string[]): boolean {
  if (at + oldLines.length > fileLines.length) return false;
  if (oldLines.length === 1) return fileLines[at]!.includes(oldLines[0]!.trim());
  return oldLines.every((line, index) => {
    const file = fileLines[at + index]!.trim();
    const wanted = line.trim();
    if (index === 0) return file.endsWith(wanted);
    if (index === oldLines.length - 1) return file.startsWith(wanted);
    return file === wanted;
  });
}

const numbered = (lines: readonly string[], first: number) =>
  lines.map((line, index) => `${String(first + index).padStart(6)}\t${line}`).join("\n");

const lineSpan = (first: number, count: number) =>
  count === 1 ? `line ${first}` : `lines ${first}-${first + count - 1}`;

function looseMatchMessage(
  fileLines: readonly string[],
  oldLines: readonly string[],
  starts: number[],
): string {
  const at = starts[0]!;
  const matched = fileLines.slice(at, at + oldLines.length);
  const spans = starts.map((start) => lineSpan(start + 1, oldLines.length));
  const where = spans.length > 1 ? `${spans.slice(0, -1).join(", ")} and ${spans.at(-1)}` : spans[0]!;
  const oldKind = indentationOf(oldLines);
  const fileKind = indentationOf(matched);
  const lines = `\n${numbered(matched, at + 1)}`;
  if (oldKind && fileKind && oldKind !== fileKind && oldKind !== "mixed" && fileKind !== "mixed") {
    return `old_str is indented with ${oldKind}, but the file indents these lines with ${fileKind}: with its indentation in ${fileKind}, old_str matches ${where}. Write old_str (and new_str) with ${fileKind}, as the file has them:${lines}`;
  }
  return `old_str matches ${where} apart from the whitespace at the start or end of its lines. Copy the lines exactly as the file has them, indentation included:${lines}`;
}

function closestLinesMessage(
  fileLines: readonly string[],
  oldStr: string,
  oldLines: readonly string[],
): string {
  const fileChars = fileLines.reduce((sum, line) => sum + line.length + 1, 0);
  const fallback = "View the file to copy the text exactly as it is there.";
  if (fileLines.length === 0 || fileChars * oldStr.length > maxComparisonWork) return fallback;
  const count = Math.min(oldLines.length, fileLines.length);
  let best = { at: 0, similarity: -1 };
  for (let at = 0; at + count <= fileLines.length; at++) {
    const window = fileLines.slice(at, at + count).join("\n");
    const similarity = 1 - distance(window, oldStr) / Math.max(window.length, oldStr.length, 1);
    if (similarity > best.similarity) best = { at, similarity };
  }
  if (best.similarity < minSimilarity) return `Nothing in the file is close to it. ${fallback}`;
  const percent = Math.floor(best.similarity * 100);
  const lines = fileLines.slice(best.at, best.at + count);
  return `The closest text in the file is ${lineSpan(best.at + 1, count)} (${percent}% alike); compare it with old_str character by character:\n${numbered(lines, best.at + 1)}`;
}

/** What to tell the model about an old_str (newlines normalised) that is nowhere in `fileLines`. */
export function missExplanation(fileLines: readonly string[], oldStr: string): string {
  const oldLines = oldStr.replace(/\n$/, "").split("\n");
  if (oldLines.some((line) => line.trim() !== "")) {
    const starts: number[] = [];
    for (let at = 0; at < fileLines.length; at++) {
      if (matchesLoosely(fileLines, at, oldLines)) starts.push(at);
    }
    if (starts.length > 0) return looseMatchMessage(fileLines, oldLines, starts);
  }
  return closestLinesMessage(fileLines, oldStr, oldLines);
}
