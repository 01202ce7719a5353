/**
 * A text file as lines with their own terminators, so an edit changes exactly the replaced lines:
 * indentation, LF or CRLF and a missing final newline stay as they were everywhere else.
 */

export interface TextFile {
  /** Line contents without terminators. An empty file has no lines. */
  lines: string[];
  /** Terminator of each line: "\n", "\r\n" or "" (only the last line may lack one). */
  eols: string[];
  /** Terminator given to new lines: the file's most common one (LF for a file without any). */
  eol: "\n" | "\r\n";
  encoding: "utf8" | "latin1";
}

/** True when the bytes look binary (a NUL byte in the first 8 KiB, as git and grep decide). */
export function looksBinary(data: Buffer): boolean {
  return data.subarray(0, 8192).includes(0);
}

export function parseTextFile(data: Buffer): TextFile {
  let text = data.toString("utf8");
  let encoding: TextFile["encoding"] = "utf8";
  if (!Buffer.from(text, "utf8").equals(data)) {
    // Not valid UTF-8: latin1 maps every byte to one character, so untouched lines stay byte-exact.
    text = data.toString("latin1");
    encoding = "latin1";
  }
  const lines: string[] = [];
  const eols: string[] = [];
  let crlf = 0;
  let lf = 0;
  let position = 0;
  while (position < text.length) {
    const newline = text.indexOf("\n", position);
    if (newline === -1) {
      lines.push(text.slice(position));
      eols.push("");
      break;
    }
    if (newline > position && text[newline - 1] === "\r") {
      lines.push(text.slice(position, newline - 1));
      eols.push("\r\n");
      crlf++;
    } else {
      lines.push(text.slice(position, newline));
      eols.push("\n");
      lf++;
    }
    position = newline + 1;
  }
  return { lines, eols, eol: crlf > lf ? "\r\n" : "\n", encoding };
}

export function serializeTextFile(file: TextFile): Buffer {
  let text = "";
  for (let index = 0; index < file.lines.length; index++) text += `${file.lines[index]}${file.eols[index]}`;
  return Buffer.from(text, file.encoding);
}

/** The text as the model sees it and as parsers read it: LF line ends. */
export function textOf(file: TextFile): string {
  return file.lines.join("\n") + (file.eols.at(-1) ? "\n" : "");
}

/**
 * Splits replacement text into lines: one trailing newline ends the last line rather than adding an
 * empty one, and CR before LF is dropped (the file's own terminator is used).
 */
export function splitReplacement(text: string): string[] {
  if (text === "") return [];
  const normalized = text.replace(/\r\n/g, "\n");
  const body = normalized.endsWith("\n") ? normalized.slice(0, -1) : normalized;
  return body.split("\n");
}

/**
 * Replaces lines start..end (1-based, inclusive; end = start - 1 inserts before start) with new lines.
 * The caller has validated the range.
 */
export function replaceLines(file: TextFile, start: number, end: number, replacement: string[]): TextFile {
  const before = file.lines.length;
  const replacesLastLine = end >= before;
  const lastHadNoEol = before > 0 && file.eols[before - 1] === "";
  const newEols = replacement.map(() => file.eol as string);
  if (replacesLastLine && lastHadNoEol && newEols.length > 0) newEols[newEols.length - 1] = "";
  const lines = [...file.lines.slice(0, start - 1), ...replacement, ...file.lines.slice(end)];
  const eols = [...file.eols.slice(0, start - 1), ...newEols, ...file.eols.slice(end)];
  // An insertion after a last line that had no terminator gives that line one, or they would merge.
  for (let index = 0; index < eols.length - 1; index++) if (eols[index] === "") eols[index] = file.eol;
  // Deleting the last lines of a file without a final newline keeps it without one.
  if (replacesLastLine && lastHadNoEol && replacement.length === 0 && eols.length > 0)
    eols[eols.length - 1] = "";
  return { ...file, lines, eols };
}
