/**
 * Cuts long output in the middle, keeping its head and tail: the start of a command's output says
 * what it did and the end says how it finished; both matter more than the middle.
 */

interface OutputLimits {
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

/** Applies the line-length, line-count and character caps; text within all of them is returned as is. */
export function cutOutput(text: string, limits: OutputLimits): string {
  const lines = text.split("\n").map((line) => cutLine(line, limits.lineMaxChars));
  const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  if (lines.length <= limits.maxLines && total <= limits.maxChars) return lines.join("\n");
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
