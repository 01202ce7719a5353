/**
 * The windowed file viewer of SWE-agent: a header naming the file and its length, how many lines lie
 * above and below, and every shown line as `LINE:TEXT`. Pure functions; the tools hold the state.
 */

/** First line of a window of `window` lines, kept inside a file of `total` lines. */
function clampWindowStart(start: number, total: number, window: number): number {
  return Math.max(1, Math.min(start, total - window + 1));
}

/** `open FILE LINE` and `goto LINE` put the target about a sixth of the way down the window. */
export function windowStartFor(line: number, total: number, window: number): number {
  return clampWindowStart(line - Math.floor(window / 6) + 1, total, window);
}

/** After an edit the window is centred on the first edited line, as SWE-agent does. */
export function windowStartAround(line: number, total: number, window: number): number {
  return clampWindowStart(line - Math.floor(window / 2), total, window);
}

/** Scrolling moves a window's length minus the overlap; `direction` is 1 (down) or -1 (up). */
export function scrolledWindowStart(
  start: number,
  total: number,
  window: number,
  overlap: number,
  direction: 1 | -1,
): number {
  return clampWindowStart(start + direction * Math.max(1, window - overlap), total, window);
}

/** The lines of the window with their numbers, without header or above/below counts. */
function numberedLines(lines: readonly string[], start: number, window: number): string[] {
  const shown: string[] = [];
  const end = Math.min(lines.length, start + window - 1);
  for (let line = Math.max(1, start); line <= end; line++) shown.push(`${line}:${lines[line - 1]}`);
  return shown;
}

/** The full viewer text: `[File: PATH (N lines total)]`, `(K more lines above)`, lines, `(K more lines below)`. */
export function renderWindow(path: string, lines: readonly string[], start: number, window: number): string {
  const total = lines.length;
  const first = clampWindowStart(start, total, window);
  const out = [`[File: ${path} (${total} lines total)]`];
  const above = first - 1;
  const below = total - (first + window - 1);
  if (above > 0) out.push(`(${above} more lines above)`);
  out.push(...numberedLines(lines, first, window));
  if (below > 0) out.push(`(${below} more lines below)`);
  return out.join("\n");
}
