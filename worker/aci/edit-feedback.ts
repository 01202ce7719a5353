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

/** The replaced lines and their replacement without the lines they share at the top and bottom. */
function changedHunk(
  oldLines: readonly string[],
  start: number,
  end: number,
  replacement: readonly string[],
) {
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
  return {
    removed: removed.slice(top, removed.length - bottom),
    added: replacement.slice(top, replacement.length - bottom),
    /** Line number of the first changed line, before and after the edit (the same). */
    first: start + top,
  };
}

function diffSide(sign: "-" | "+", lines: readonly string[], first: number): string[] {
  const shown = lines.slice(0, diffMaxLines).map((line, index) => `${sign}${first + index}:${line}`);
  const more = lines.length - diffMaxLines;
  if (more > 0) shown.push(`${sign}(${more} more line${more === 1 ? "" : "s"})`);
  return shown;
}

/**
 * What an edit removed and what took its place, when it removed anything (the region above shows the
 * new lines; only a diff shows the old ones). Unchanged lines at either end are left out.
 */
export function editDiff(
  oldLines: readonly string[],
  start: number,
  end: number,
  replacement: readonly string[],
): string | null {
  const hunk = changedHunk(oldLines, start, end, replacement);
  if (hunk.removed.length === 0 && hunk.added.length === 0 && end >= start)
    return "Note: the new lines are the same as the old ones; the file did not change.";
  if (hunk.removed.length === 0) return null;
  return [
    "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
    ...diffSide("-", hunk.removed, hunk.first),
    ...diffSide("+", hunk.added, hunk.first),
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
  const { removed, added } = changedHunk(oldLines, start, end, replacement);
  if (added.length === 0) return null;
  const code = removed.filter((line) => commentOrBlank(path, line) === false);
  if (code.length === 0 || !added.every((line) => commentOrBlank(path, line) === true)) return null;
  const shown = code[0]!.trim();
  const example = shown.length > 60 ? `${shown.slice(0, 60)}...` : shown;
  return `Warning: your edit replaced ${code.length} line(s) of code (e.g. \`${example}\`) with only comments or blank lines, so that code is gone. If it should stay, edit again to restore it.`;
}
