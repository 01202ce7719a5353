/**
 * What an accepted line edit answers with: the changed lines with a few lines of context and their new
 * numbers (not a whole window: a one-line change came back as ~1.2k tokens), a warning when the edit's
 * indentation (tabs or spaces) differs from the file's, and the anchor check of a line-range edit.
 */
import { renderWindow } from "./viewer.js";

/** Lines of context shown above and below the changed lines. */
const feedbackContext = 3;

/** The changed lines `start..start+newLineCount-1` of the new file, with context, in the viewer's frame. */
export function editedRegion(
  path: string,
  lines: readonly string[],
  start: number,
  newLineCount: number,
): string {
  const first = Math.max(1, start - feedbackContext);
  const last = Math.min(lines.length, start + newLineCount - 1 + feedbackContext);
  return renderWindow(path, lines, first, Math.max(0, last - first + 1));
}

/** SWE-agent's "File updated" line, saying which lines the edit now occupies. */
export function updatedMessage(start: number, newLineCount: number): string {
  const where =
    newLineCount === 0
      ? `File updated: lines removed before line ${start}.`
      : newLineCount === 1
        ? `File updated: the edited line is now line ${start}.`
        : `File updated: the edited lines are now ${start}-${start + newLineCount - 1}.`;
  return `${where} Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`;
}

type Indentation = "tabs" | "spaces";

function indentOf(line: string): Indentation | null {
  if (line.startsWith("\t")) return "tabs";
  // A single space is alignment (` * ` in block comments), not indentation.
  if (line.startsWith("  ") && line.trim() !== "") return "spaces";
  return null;
}

/** The file's indentation, from the lines the edit did not touch; null when mixed or none. */
function fileIndentation(lines: readonly string[], start: number, end: number): Indentation | null {
  let tabs = 0;
  let spaces = 0;
  lines.forEach((line, index) => {
    if (index + 1 >= start && index + 1 <= end) return;
    const kind = indentOf(line);
    if (kind === "tabs") tabs++;
    else if (kind === "spaces") spaces++;
  });
  if (tabs > 0 && tabs >= 3 * spaces) return "tabs";
  if (spaces > 0 && spaces >= 3 * tabs) return "spaces";
  return null;
}

/** A warning naming the edit's lines whose indentation differs from the rest of the file, or null. */
export function indentationWarning(
  oldLines: readonly string[],
  start: number,
  end: number,
  replacement: readonly string[],
): string | null {
  const style = fileIndentation(oldLines, start, end);
  if (style === null) return null;
  const odd = replacement.flatMap((line, index) => {
    const kind = indentOf(line);
    return kind !== null && kind !== style ? [start + index] : [];
  });
  if (odd.length === 0) return null;
  const shown = odd.length > 5 ? `${odd.slice(0, 5).join(", ")}, ...` : odd.join(", ");
  const other = style === "tabs" ? "spaces" : "tabs";
  return `Warning: this file is indented with ${style}, but line(s) ${shown} of your edit are indented with ${other}. Check the indentation and edit again if it is wrong.`;
}

const normalise = (lines: readonly string[]) =>
  lines
    .map((line) => line.trimEnd())
    .join("\n")
    .trimEnd();

/**
 * True when `expected` is the current text of lines start..end (for an insertion: line `start`), or
 * that text's first line; trailing whitespace is ignored.
 */
export function anchorMatches(
  lines: readonly string[],
  start: number,
  end: number,
  expected: string,
): boolean {
  const range = lines.slice(start - 1, Math.max(end, start));
  const wanted = normalise(expected.replace(/\r\n/g, "\n").split("\n"));
  if (wanted === normalise(range)) return true;
  return !wanted.includes("\n") && range.length > 0 && wanted === range[0]!.trimEnd();
}

/** The refusal of an edit whose anchor does not match, with the current lines around the range. */
export function anchorMismatch(path: string, lines: readonly string[], start: number, end: number): string {
  const last = Math.max(end, start);
  const first = Math.max(1, start - feedbackContext);
  const shown = Math.min(lines.length, last + feedbackContext) - first + 1;
  return [
    `Error: lines ${start}-${last} of ${path} are not the text given in expected_text (the file has changed since you read those line numbers, e.g. by an earlier edit). The file was not changed. The lines there now:`,
    renderWindow(path, lines, first, shown),
    "Use the current line numbers and run the edit again.",
  ].join("\n");
}

/** Lines of each side of an edit's diff shown; the rest are counted. */
const diffMaxLines = 8;

/**
 * The largest old-lines × new-lines product diffed line by line (a 1000-line range against its
 * 1000-line replacement); past it the lines between the shared ends all count as changed.
 */
const diffMaxCells = 1_000_000;

/** One changed line: removed (its old number) or added (its new number). */
interface ChangedLine {
  sign: "-" | "+";
  line: number;
  text: string;
}

/**
 * The lines an edit changed: a line diff (longest common subsequence) of the replaced range and its
 * replacement, so a line kept between two changes is neither removed nor added. Each run of changes
 * lists its removed lines, then its added ones.
 */
function changedLines(
  oldLines: readonly string[],
  start: number,
  end: number,
  replacement: readonly string[],
): ChangedLine[] {
  const removed = oldLines.slice(start - 1, Math.max(end, start - 1));
  let top = 0;
  while (top < removed.length && top < replacement.length && removed[top] === replacement[top]) top++;
  let bottom = 0;
  while (
    bottom < removed.length - top &&
    bottom < replacement.length - top &&
    removed[removed.length - 1 - bottom] === replacement[replacement.length - 1 - bottom]
  ) {
    bottom++;
  }
  const a = removed.slice(top, removed.length - bottom);
  const b = replacement.slice(top, replacement.length - bottom);
  const kept = a.length * b.length <= diffMaxCells ? commonLines(a, b) : [];
  const changes: ChangedLine[] = [];
  let i = 0;
  let j = 0;
  // Each kept pair (and the end) closes a run of changes: its removed lines, then its added ones.
  for (const [keptA, keptB] of [...kept, [a.length, b.length] as const]) {
    for (; i < keptA; i++) changes.push({ sign: "-", line: start + top + i, text: a[i]! });
    for (; j < keptB; j++) changes.push({ sign: "+", line: start + top + j, text: b[j]! });
    i++;
    j++;
  }
  return changes;
}

/** The index pairs of a longest common subsequence of `a` and `b`, in order. */
function commonLines(a: readonly string[], b: readonly string[]): (readonly [number, number])[] {
  const width = b.length + 1;
  // lengths[i * width + j]: the longest common subsequence of a[i..] and b[j..].
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const pairs: (readonly [number, number])[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!) i++;
    else j++;
  }
  return pairs;
}

/** The changed lines, at most diffMaxLines of each sign; the rest counted after them. */
function diffLines(changes: readonly ChangedLine[]): string[] {
  const shown: string[] = [];
  const more = { "-": 0, "+": 0 };
  const count = { "-": 0, "+": 0 };
  for (const change of changes) {
    if (count[change.sign]++ < diffMaxLines) shown.push(`${change.sign}${change.line}:${change.text}`);
    else more[change.sign]++;
  }
  for (const sign of ["-", "+"] as const) {
    const n = more[sign];
    if (n > 0) shown.push(`${sign}(${n} more line${n === 1 ? "" : "s"})`);
  }
  return shown;
}

/**
 * What an edit removed and what took its place, when it removed anything (the region above shows the
 * new lines; only a diff shows the old ones). Lines the edit kept, at either end or between two
 * changes, are left out.
 */
export function editDiff(
  oldLines: readonly string[],
  start: number,
  end: number,
  replacement: readonly string[],
): string | null {
  const changes = changedLines(oldLines, start, end, replacement);
  if (changes.length === 0 && end >= start)
    return "Note: the new lines are the same as the old ones; the file did not change.";
  if (!changes.some((change) => change.sign === "-")) return null;
  return [
    "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
    ...diffLines(changes),
  ].join("\n");
}

const hashComment =
  /\.(py|pyi|rb|rake|sh|bash|ya?ml|toml|pl|r|cfg|conf|mk)$|(^|\/)(Makefile|Dockerfile|Rakefile|Gemfile)$/i;
const slashComment =
  /\.(js|mjs|cjs|jsx|ts|mts|cts|tsx|go|rs|java|kt|kts|scala|swift|c|h|cc|cpp|cxx|hh|hpp|hxx|cs|php|css|scss|less|dart)$/i;

/** Whether a line is blank or only a comment in the language of `path`; null when that is unknown. */
function commentOrBlank(path: string, line: string): boolean | null {
  const text = line.trim();
  if (text === "") return true;
  if (hashComment.test(path)) return text.startsWith("#");
  if (slashComment.test(path))
    return text.startsWith("//") || text.startsWith("/*") || text.startsWith("*") || text.endsWith("*/");
  return null;
}

/** A warning when the edit put only comments or blank lines where there was code, or null. */
export function commentedOutWarning(
  path: string,
  oldLines: readonly string[],
  start: number,
  end: number,
  replacement: readonly string[],
): string | null {
  const changes = changedLines(oldLines, start, end, replacement);
  const removed = changes.filter((change) => change.sign === "-").map((change) => change.text);
  const added = changes.filter((change) => change.sign === "+").map((change) => change.text);
  if (added.length === 0) return null;
  const code = removed.filter((line) => commentOrBlank(path, line) === false);
  if (code.length === 0 || !added.every((line) => commentOrBlank(path, line) === true)) return null;
  const shown = code[0]!.trim();
  const example = shown.length > 60 ? `${shown.slice(0, 60)}...` : shown;
  return `Warning: your edit replaced ${code.length} line(s) of code (e.g. \`${example}\`) with only comments or blank lines, so that code is gone. If it should stay, edit again to restore it.`;
}
