/** search_dir's extras (issue 12): the matching lines themselves, and a check of a regular expression. */
import type { ToolContext } from "../../../src/shared/contracts.js";
import { shellQuote } from "../paths.js";
import type { AciRuntime } from "../tool.js";

const lineMaxChars = 200;

function exec(runtime: AciRuntime, context: ToolContext, command: string) {
  return context.sandbox.exec(command, {
    cwd: runtime.root,
    timeoutMs: runtime.config.toolTimeoutMs,
    ...(context.signal ? { signal: context.signal } : {}),
  });
}

/**
 * The first `max` matching lines under `relativeDir` in path order, as `LINE:TEXT` per file. Sorted by
 * path so the answer is the same every time (ripgrep searches files in parallel otherwise).
 */
export async function matchingLines(
  runtime: AciRuntime,
  context: ToolContext,
  relativeDir: string,
  pattern: string,
  max: number,
): Promise<Map<string, string[]>> {
  const quoted = relativeDir === "" ? "." : shellQuote(relativeDir);
  const result = await exec(
    runtime,
    context,
    `rg -n --with-filename --no-heading --no-messages --sort path ${pattern} -- ${quoted} 2>/dev/null | head -n ${max}`,
  );
  const byFile = new Map<string, string[]>();
  if (result.timedOut) return byFile;
  for (const line of result.output.split("\n")) {
    const match = /^(.*?):(\d+):(.*)$/.exec(line);
    if (!match) continue;
    const path = relativeDir === "" && match[1]!.startsWith("./") ? match[1]!.slice(2) : match[1]!;
    const text = match[3]!.length > lineMaxChars ? `${match[3]!.slice(0, lineMaxChars)} ...` : match[3]!;
    byFile.set(path, [...(byFile.get(path) ?? []), `${match[2]}:${text}`]);
  }
  return byFile;
}

/** ripgrep's complaint about a regular expression, or null when it is valid. */
export async function regexProblem(
  runtime: AciRuntime,
  context: ToolContext,
  term: string,
): Promise<string | null> {
  const result = await exec(
    runtime,
    context,
    `rg -e ${shellQuote(term)} -- /dev/null 2>&1 >/dev/null | head -n 8`,
  );
  const complaint = result.output.trim();
  if (complaint === "") return null;
  return `Error: search_term is not a valid regular expression (ripgrep's syntax); nothing was searched.\n${complaint}\nEscape special characters with \\, or leave regex out to match the term literally.`;
}
