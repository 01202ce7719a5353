/**
 * Cuts long output in the middle, keeping its head and tail: the start of a command's output says
 * what it did and the end says how it finished; both matter more than the middle.
 */

export interface OutputLimits {
  maxLines: number;
  maxChars: number;
  lineMaxChars: number;
}

export function cutLine(line: string, maxChars: number): string {
  if (line.length <= maxChars) return line;
  const keep = Math.floor(maxChars / 2);
  const cut = line.length - 2 * keep;
  return `${line.slice(0, keep)} ... [${cut} characters cut from this line] ... ${line.slice(line.length - keep)}`;
}

/**
 * How far past the line and character caps an output may go and still be shown whole: 10%. A 410-line
 * file under a 400-line cap lost its 12 middle lines to the cut, saving 3% of the answer while hiding
 * the lines the model had asked for and costing it another call to get them. Past 10% the cut saves
 * enough to be worth that call.
 */
const almostFitsSlack = 0.1;

/** True when `lineCount` lines of `charCount` characters in all are shown whole (within the caps + 10%). */
export function almostFits(lineCount: number, charCount: number, limits: OutputLimits): boolean {
  return (
    lineCount <= Math.floor(limits.maxLines * (1 + almostFitsSlack)) &&
    charCount <= Math.floor(limits.maxChars * (1 + almostFitsSlack))
  );
}

/** Applies the line-length, line-count and character caps; text that almost fits them is returned as is. */
export function cutOutput(text: string, limits: OutputLimits): string {
  const lines = text.split("\n").map((line) => cutLine(line, limits.lineMaxChars));
  const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  if (almostFits(lines.length, total, limits)) return lines.join("\n");
  const budget = Math.floor(limits.maxChars / 2);
  const half = Math.floor(limits.maxLines / 2);
  let head = 0;
  let headChars = 0;
  while (head < half && head < lines.length && headChars + lines[head]!.length + 1 <= budget) {
    headChars += lines[head]!.length + 1;
    head++;
  }
  let tail = 0;
  let tailChars = 0;
  while (
    tail < half &&
    head + tail < lines.length &&
    tailChars + lines[lines.length - 1 - tail]!.length + 1 <= budget
  ) {
    tailChars += lines[lines.length - 1 - tail]!.length + 1;
    tail++;
  }
  const omitted = lines.length - head - tail;
  return [
    ...lines.slice(0, head),
    `[... ${omitted} lines of output omitted from the middle; narrow the command (grep, head, tail, sed -n) to see them ...]`,
    ...lines.slice(lines.length - tail),
  ].join("\n");
}
