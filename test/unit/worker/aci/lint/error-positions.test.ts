/**
 * A syntax error is reported where the edit made it (issue 16): tree-sitter's error recovery can wrap a
 * whole function in one ERROR node whose first line is far above the edit ("1:1 unexpected `/** ...`"
 * for a missing colon on line 31); the errors nested in it, nearest the edited lines first, are shown.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { rejectionMessage } from "../../../../../worker/aci/gated-write.js";
import { checkEdit } from "../../../../../worker/aci/lint/gate.js";
import { parseTextFile } from "../../../../../worker/aci/text-file.js";

const sample = fileURLToPath(new URL("../../../../fixtures/lint/define-tool.ts.txt", import.meta.url));

async function missingColon() {
  const before = await readFile(sample, "utf8");
  const lines = before.split("\n");
  const line = lines.indexOf("    parameters: z.object({") + 1;
  lines[line - 1] = "    parameters z.object({";
  const after = lines.join("\n");
  const span = { start: line, end: line, newLineCount: 1 };
  return { before, after, line, span, verdict: await checkEdit("tool.ts", before, after, span) };
}

describe("error positions point at the edit", () => {
  it("a missing colon in an object literal is reported on its own line first, not at the file's top", async () => {
    const { line, verdict } = await missingColon();
    expect(line).toBe(31);
    expect(verdict.checked && verdict.newErrors[0]).toMatchObject({
      line: 31,
      column: 16,
      message: "unexpected `z.object`",
    });
  });

  it("the rejection lists the five nearest errors and counts the rest", async () => {
    const { before, after, line, verdict } = await missingColon();
    if (!verdict.checked) throw new Error("TypeScript is checked");
    const message = rejectionMessage({
      path: "tool.ts",
      errors: verdict.newErrors,
      original: parseTextFile(Buffer.from(before)),
      proposed: parseTextFile(Buffer.from(after)),
      start: line,
      end: line,
      newLineCount: 1,
    });
    const errors = message.split("\n\n")[1]!.split("\n");
    expect(errors).toEqual([
      "ERRORS:",
      "- 31:16: unexpected `z.object`",
      "- 38:6: unexpected `),` (a `)` has no matching `(`)",
      "- 40:32: unexpected `=`",
      "- 41:13: unexpected `open`",
      "- 41:42: unexpected `;`",
      `- (${verdict.newErrors.length - 5} more, further from your edit)`,
    ]);
    expect(verdict.newErrors.length).toBeGreaterThan(5);
  });
});
