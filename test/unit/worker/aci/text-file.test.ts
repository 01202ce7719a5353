/** Line-exact editing: terminators, a missing final newline and non-UTF-8 bytes survive outside the edit. */
import { describe, expect, it } from "vitest";
import {
  looksBinary,
  parseTextFile,
  replaceLines,
  serializeTextFile,
  splitReplacement,
} from "../../../../worker/aci/text-file.js";

const roundTrip = (text: string | Buffer) => serializeTextFile(parseTextFile(Buffer.from(text)));
const edited = (text: string, start: number, end: number, lines: string[]) =>
  serializeTextFile(replaceLines(parseTextFile(Buffer.from(text)), start, end, lines)).toString("latin1");

describe("text files", () => {
  it("round-trips LF, CRLF, mixed endings, no final newline, empty files and latin1 bytes exactly", () => {
    for (const text of [
      "a\nb\n",
      "a\r\nb\r\n",
      "a\r\nb\nc",
      "",
      "x",
      Buffer.from([0x61, 0xe9, 0x0a, 0xff]),
    ]) {
      expect(roundTrip(text).equals(Buffer.from(text))).toBe(true);
    }
    expect(parseTextFile(Buffer.from([0x61, 0xe9, 0x0a])).encoding).toBe("latin1");
  });

  it("counts lines like awk: a last line without newline counts, an empty file has none", () => {
    expect(parseTextFile(Buffer.from("a\nb")).lines).toEqual(["a", "b"]);
    expect(parseTextFile(Buffer.from("a\nb\n")).lines).toEqual(["a", "b"]);
    expect(parseTextFile(Buffer.from("")).lines).toEqual([]);
  });

  it("gives new lines the file's dominant ending and keeps other lines' endings", () => {
    expect(edited("a\r\nb\r\nc\n", 2, 2, ["X", "Y"])).toBe("a\r\nX\r\nY\r\nc\n");
    expect(edited("a\nb\nc\n", 2, 1, ["new"])).toBe("a\nnew\nb\nc\n");
  });

  it("keeps a missing final newline when the last line is replaced, appended to or deleted", () => {
    expect(edited("a\nb", 2, 2, ["B"])).toBe("a\nB");
    expect(edited("a\nb", 3, 2, ["c"])).toBe("a\nb\nc");
    expect(edited("a\nb", 2, 2, [])).toBe("a");
    expect(edited("a\nb\n", 2, 2, [])).toBe("a\n");
    expect(edited("", 1, 0, ["x"])).toBe("x\n");
  });

  it("splits replacement text: one trailing newline ends the last line, CRLF is normalised", () => {
    expect(splitReplacement("a\nb\n")).toEqual(["a", "b"]);
    expect(splitReplacement("a\r\nb")).toEqual(["a", "b"]);
    expect(splitReplacement("a\n\n")).toEqual(["a", ""]);
    expect(splitReplacement("")).toEqual([]);
  });

  it("recognises binary data by a NUL byte", () => {
    expect(looksBinary(Buffer.from([0x50, 0x00, 0x41]))).toBe(true);
    expect(looksBinary(Buffer.from("text\n"))).toBe(false);
  });
});
