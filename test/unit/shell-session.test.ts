import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ansiC } from "../../sandbox/shell-session.js";

describe("ansiC", () => {
  it("quotes any text so that bash gives back the same bytes", () => {
    const samples = [
      "plain",
      'it\'s "quoted" \\ back',
      "tab\tnew\nline\r\x01\x7f",
      "$HOME `id` $(id) !x",
      "héllo ✓ 𝄞",
    ];
    for (const s of samples) {
      const out = execFileSync("bash", ["--noprofile", "--norc", "-c", `printf %s ${ansiC(s)}`]);
      expect(out.toString("utf8")).toBe(s);
    }
  });

  it("refuses NUL", () => {
    expect(() => ansiC("a\0b")).toThrow(/NUL/);
  });
});
