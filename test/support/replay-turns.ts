/**
 * Replayed model turns written by a test: one tool call each, and the sample's recorded fix of median()
 * with a test's own turns spliced in, so a hostile step runs inside a run that otherwise publishes.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { SAMPLE_REPLAY } from "./stack-parts.js";

/** One replayed model turn calling `tool`. */
export function turn(content: string, tool: string, args: Record<string, unknown> = {}): string {
  const id = `call_${randomBytes(4).toString("hex")}`;
  return JSON.stringify({
    role: "assistant",
    content,
    tool_calls: [{ id, type: "function", function: { name: tool, arguments: JSON.stringify(args) } }],
  });
}

/** A bash turn writing `text` to `path` (base64 through the shell: no quoting to get wrong). */
export function writeTurn(content: string, path: string, text: string): string {
  const encoded = Buffer.from(text).toString("base64");
  return turn(content, "bash", {
    command: `mkdir -p "$(dirname ${path})" && echo ${encoded} | base64 -d > ${path}`,
  });
}

/** The sample's recorded fix with `extra` turns after its edits, before its test run and submit. */
export async function sampleFixWith(extra: string[]): Promise<string> {
  const lines = (await readFile(SAMPLE_REPLAY, "utf8")).trim().split("\n");
  // The sample's turns: search, open, edit, open the test, edit it, run the tests, submit, summary.
  return [...lines.slice(0, 5), ...extra, ...lines.slice(5)].join("\n");
}
