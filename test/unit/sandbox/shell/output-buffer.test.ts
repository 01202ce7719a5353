import { describe, expect, it } from "vitest";
import { countNewlines, OutputBuffer } from "../../../../sandbox/shell/output-buffer.js";

function lines(from: number, to: number): string {
  let s = "";
  for (let i = from; i <= to; i++) s += `${i}\n`;
  return s;
}

describe("OutputBuffer", () => {
  it("keeps everything under the cap", () => {
    const b = new OutputBuffer(100);
    b.push("abc\n");
    b.push("def");
    expect(b.render()).toEqual({ text: "abc\ndef", truncated: false, cutLines: 0 });
  });

  it("is unbounded without a cap", () => {
    const b = new OutputBuffer();
    const text = "x".repeat(1_000_000);
    b.push(text);
    expect(b.render().text).toBe(text);
  });

  it("keeps whole lines at head and tail and counts the cut ones, whatever the chunking", () => {
    const all = lines(1, 5000);
    for (const chunkSize of [1, 7, 64, 4096, all.length]) {
      const b = new OutputBuffer(200);
      for (let i = 0; i < all.length; i += chunkSize) b.push(all.slice(i, i + chunkSize));
      const r = b.render();
      expect(r.truncated).toBe(true);
      const [head, tail] = r.text.split(/\.\.\. \[\d+ lines truncated\] \.\.\.\n/);
      const headLines = head!.split("\n").filter(Boolean).map(Number);
      const tailLines = tail!.split("\n").filter(Boolean).map(Number);
      expect(headLines[0]).toBe(1);
      expect(headLines).toEqual(headLines.map((_, i) => i + 1));
      expect(tailLines[tailLines.length - 1]).toBe(5000);
      expect(tailLines).toEqual(tailLines.map((_, i) => 5000 - tailLines.length + 1 + i));
      expect(headLines.length + tailLines.length + r.cutLines).toBe(5000);
      expect(r.text).toContain(`... [${r.cutLines} lines truncated] ...\n`);
      expect(r.text.length).toBeLessThanOrEqual(200 + 40);
    }
  });

  it("cuts one huge line by characters and still says so", () => {
    const b = new OutputBuffer(100);
    b.push("y".repeat(10_000));
    const r = b.render();
    expect(r.truncated).toBe(true);
    expect(r.cutLines).toBe(1);
    expect(r.text).toMatch(/^y{50}\n\.\.\. \[1 lines truncated\] \.\.\.\ny{50}$/);
  });

  it("holds bounded memory for unbounded input", () => {
    const b = new OutputBuffer(1000);
    for (let i = 0; i < 100_000; i++) b.push(`line ${i}\n`);
    expect(b.totalChars).toBeGreaterThan(1_000_000);
    expect(b.render().text.length).toBeLessThan(1100);
  });

  it("counts newlines", () => {
    expect(countNewlines("")).toBe(0);
    expect(countNewlines("a\nb\n\n")).toBe(3);
  });
});
