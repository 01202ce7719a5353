/**
 * Bounded capture of a command's output: the first half of the budget is kept as the head, the last half
 * as a ring-buffer tail; whatever falls between is only counted. Memory stays bounded by `maxChars`
 * however much a command prints.
 */
interface RenderedOutput {
  text: string;
  truncated: boolean;
  /** Lines (or parts of lines) left out between the head and the tail. */
  cutLines: number;
}

export class OutputBuffer {
  private readonly headMax: number;
  private readonly tailMax: number;
  private head = "";
  private tail: string[] = [];
  private tailLength = 0;
  private droppedChars = 0;
  private droppedNewlines = 0;
  private droppedLastChar = "";

  constructor(readonly maxChars: number = Number.POSITIVE_INFINITY) {
    if (!(maxChars > 0)) throw new RangeError("maxChars must be positive");
    this.headMax = Number.isFinite(maxChars) ? Math.ceil(maxChars / 2) : Number.POSITIVE_INFINITY;
    this.tailMax = Number.isFinite(maxChars) ? Math.floor(maxChars / 2) : 0;
  }

  /** Characters received so far, kept or not. */
  get totalChars(): number {
    return this.head.length + this.droppedChars + this.tailLength;
  }

  push(chunk: string): void {
    if (chunk.length === 0) return;
    let rest = chunk;
    if (this.head.length < this.headMax) {
      const take = Math.min(this.headMax - this.head.length, rest.length);
      this.head += rest.slice(0, take);
      rest = rest.slice(take);
      if (rest.length === 0) return;
    }
    if (this.tailMax === 0) {
      this.drop(rest);
      return;
    }
    this.tail.push(rest);
    this.tailLength += rest.length;
    while (this.tailLength > this.tailMax) {
      const first = this.tail[0]!;
      const excess = this.tailLength - this.tailMax;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailLength -= first.length;
        this.drop(first);
      } else {
        this.tail[0] = first.slice(excess);
        this.tailLength -= excess;
        this.drop(first.slice(0, excess));
      }
    }
  }

  private drop(text: string): void {
    this.droppedChars += text.length;
    this.droppedNewlines += countNewlines(text);
    this.droppedLastChar = text[text.length - 1] ?? this.droppedLastChar;
  }

  /** The kept text; when something was cut, a line `... [N lines truncated] ...` stands where it was. */
  render(): RenderedOutput {
    const tail = this.tail.join("");
    if (this.droppedChars === 0) return { text: this.head + tail, truncated: false, cutLines: 0 };

    // Cut at line boundaries where there are any, so that no half line is shown.
    let headPart = this.head;
    let headRest = "";
    const lastNl = this.head.lastIndexOf("\n");
    if (lastNl >= 0 && lastNl < this.head.length - 1) {
      headPart = this.head.slice(0, lastNl + 1);
      headRest = this.head.slice(lastNl + 1);
    }
    let tailPart = tail;
    let tailRest = "";
    if (this.droppedLastChar !== "\n") {
      const firstNl = tail.indexOf("\n");
      if (firstNl >= 0) {
        tailRest = tail.slice(0, firstNl + 1);
        tailPart = tail.slice(firstNl + 1);
      }
    }
    const cutNewlines = countNewlines(headRest) + this.droppedNewlines + countNewlines(tailRest);
    const cutEndsWithNewline = tailRest.length > 0 ? true : this.droppedLastChar === "\n";
    const cutLines = Math.max(1, cutNewlines + (cutEndsWithNewline ? 0 : 1));
    const separator = headPart.length === 0 || headPart.endsWith("\n") ? "" : "\n";
    const text = `${headPart}${separator}... [${cutLines} lines truncated] ...\n${tailPart}`;
    return { text, truncated: true, cutLines };
  }
}

export function countNewlines(text: string): number {
  let n = 0;
  let i = text.indexOf("\n");
  while (i !== -1) {
    n++;
    i = text.indexOf("\n", i + 1);
  }
  return n;
}
