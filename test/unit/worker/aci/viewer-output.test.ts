/** The viewer's window arithmetic and exact frame, and the middle cut of long output. */
import { describe, expect, it } from "vitest";
import { cutLine, cutOutput } from "../../../../worker/aci/output.js";
import {
  renderWindow,
  scrolledWindowStart,
  windowStartAround,
  windowStartFor,
} from "../../../../worker/aci/viewer.js";

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

describe("viewer", () => {
  it("frames a window with the header, the counts above and below and numbered lines", () => {
    expect(renderWindow("a.py", lines(5), 2, 2)).toBe(
      "[File: a.py (5 lines total)]\n(1 more lines above)\n2:line 2\n3:line 3\n(2 more lines below)",
    );
    expect(renderWindow("a.py", lines(2), 1, 100)).toBe("[File: a.py (2 lines total)]\n1:line 1\n2:line 2");
    expect(renderWindow("empty.py", [], 1, 100)).toBe("[File: empty.py (0 lines total)]");
  });

  it("places a target line a sixth of the way down, kept inside the file", () => {
    expect(windowStartFor(500, 1000, 100)).toBe(485);
    expect(windowStartFor(10, 1000, 100)).toBe(1);
    expect(windowStartFor(995, 1000, 100)).toBe(901);
    expect(windowStartFor(3, 5, 100)).toBe(1);
  });

  it("scrolls by the window minus the overlap and centres an edit", () => {
    expect(scrolledWindowStart(1, 1000, 100, 2, 1)).toBe(99);
    expect(scrolledWindowStart(99, 1000, 100, 2, -1)).toBe(1);
    expect(scrolledWindowStart(950, 1000, 100, 2, 1)).toBe(901);
    expect(windowStartAround(500, 1000, 100)).toBe(450);
  });
});

describe("output cutting", () => {
  const limits = { maxLines: 10, maxChars: 10_000, lineMaxChars: 100 };

  it("leaves short output alone", () => {
    expect(cutOutput("a\nb", limits)).toBe("a\nb");
  });

  it("keeps output that almost fits whole: at most 10% over the caps (issue 16)", () => {
    expect(cutOutput(lines(11).join("\n"), limits)).toBe(lines(11).join("\n"));
    expect(cutOutput(lines(12).join("\n"), limits)).toContain("lines of output omitted from the middle");
    const chars = { maxLines: 100, maxChars: 100, lineMaxChars: 200 };
    expect(cutOutput("x".repeat(109), chars)).toBe("x".repeat(109));
    expect(cutOutput(`${"x".repeat(60)}\n${"y".repeat(60)}`, chars)).toContain("omitted");
  });

  it("keeps head and tail and says how many lines were left out", () => {
    const text = lines(30).join("\n");
    expect(cutOutput(text, limits).split("\n")).toEqual([
      ...lines(5),
      "[... 20 lines of output omitted from the middle; narrow the command (grep, head, tail, sed -n) to see them ...]",
      ...lines(30).slice(25),
    ]);
  });

  it("applies the character cap to few, long lines", () => {
    const text = Array.from({ length: 6 }, () => "x".repeat(90)).join("\n");
    const cut = cutOutput(text, { maxLines: 100, maxChars: 300, lineMaxChars: 100 }).split("\n");
    expect(cut).toHaveLength(3);
    expect(cut[1]).toContain("4 lines of output omitted");
  });

  it("cuts one over-long line in the middle", () => {
    expect(cutLine(`${"a".repeat(60)}${"b".repeat(60)}`, 100)).toBe(
      `${"a".repeat(50)} ... [20 characters cut from this line] ... ${"b".repeat(50)}`,
    );
  });
});
