/** The editor bundle's texts that need no sandbox: why a str_replace found nothing, and a view sized to the caps. */
import { describe, expect, it } from "vitest";
import { catN } from "../../../../../worker/aci/tools/editor-view.js";
import { missExplanation } from "../../../../../worker/aci/tools/str-replace-miss.js";

const spaced = ["def f(x):", "    if x:", "        return 1", "    return 0"];

describe("why str_replace found nothing", () => {
  it("old_str with tabs where the file has spaces, over several lines", () => {
    expect(missExplanation(spaced, "\tif x:\n\t\treturn 1")).toBe(
      "old_str is indented with tabs, but the file indents these lines with spaces: with its indentation in spaces, old_str matches lines 2-3. Write old_str (and new_str) with spaces, as the file has them:\n     2\t    if x:\n     3\t        return 1",
    );
  });

  it("the same kind of indentation at another depth, at every place it matches", () => {
    expect(missExplanation([...spaced, "    if x:", "        return 1"], "  if x:\n    return 1")).toBe(
      "old_str matches lines 2-3 and lines 5-6 apart from the whitespace at the start or end of its lines. Copy the lines exactly as the file has them, indentation included:\n     2\t    if x:\n     3\t        return 1",
    );
  });

  it("the closest lines when nothing matches, or says that nothing is close", () => {
    expect(missExplanation(spaced, "    if y:\n        return 1")).toBe(
      "The closest text in the file is lines 2-3 (96% alike); compare it with old_str character by character:\n     2\t    if x:\n     3\t        return 1",
    );
    expect(missExplanation(spaced, "class Unrelated(Base): pass")).toBe(
      "Nothing in the file is close to it. View the file to copy the text exactly as it is there.",
    );
  });
});

describe("a view sized to the output caps", () => {
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
  const limits = { maxLines: 20, maxChars: 100_000, lineMaxChars: 200 };

  it("shows lines that almost fit whole: 22 lines under a 20-line cap", () => {
    expect(catN(lines.slice(0, 21), 1, "f.py", limits).split("\n")).toHaveLength(23);
  });

  it("clips after the last line that fits and names the view_range of the next ones", () => {
    const shown = catN(lines, 5, "f.py", limits).split("\n");
    expect(shown).toHaveLength(16 + 3);
    expect(shown.at(-3)).toBe("    20\tline 16");
    expect(shown.at(-2)).toBe(
      "<response clipped><NOTE>Only lines 5-20 of the 30 lines asked for fit in one answer. To see the next ones, call view on this file with view_range [21, 34]; to find a line first, use search_file.</NOTE>",
    );
  });

  it("clips on characters too", () => {
    const long = Array.from({ length: 10 }, () => "x".repeat(150));
    const shown = catN(long, 1, "f.py", { maxLines: 400, maxChars: 1000, lineMaxChars: 200 });
    expect(shown).toContain("Only lines 1-2 of the 10 lines asked for fit in one answer.");
  });
});
