/** `view` of the editor bundle: a file as `cat -n` shows it (optionally a line range), or a directory listing. */
import { z } from "zod";
import type { ToolContext, ToolResult } from "../../../src/shared/contracts.js";
import { readFailureMessage, readTextFile } from "../files.js";
import { prewarm } from "../lint/gate.js";
import { almostFits, cutLine, type OutputLimits } from "../output.js";
import { outsideRepositoryMessage, type RepoPath, resolveRepoPath, shellQuote } from "../paths.js";
import { textOf } from "../text-file.js";
import { type AciRuntime, type AciTool, defineTool, integerArg, observation, stringArg } from "../tool.js";

/** Room kept for the header and the clipping note when a view is clipped to the output caps. */
const frameLines = 4;
const frameChars = 600;

/** The output caps of the environment: a view is sized to them so that it is never cut in the middle. */
export function outputLimits(runtime: AciRuntime): OutputLimits {
  const { config } = runtime;
  return {
    maxLines: config.outputMaxLines,
    maxChars: config.outputMaxChars,
    lineMaxChars: config.lineMaxChars,
  };
}

/**
 * `cat -n` style: the line number right-aligned in 6 columns, a tab, the line. Lines that almost fit the
 * output caps are shown whole; more are clipped after the last whole line that fits, with a note naming
 * the `view_range` that shows the next ones.
 */
export function catN(
  lines: readonly string[],
  firstLine: number,
  descriptor: string,
  limits: OutputLimits,
): string {
  const header = `Here's the result of running \`cat -n\` on ${descriptor}:`;
  const numbered = lines.map((line, index) => `${String(index + firstLine).padStart(6)}\t${line}`);
  const cost = (line: string) => cutLine(line, limits.lineMaxChars).length + 1;
  const total = numbered.reduce((sum, line) => sum + cost(line), header.length + 1);
  if (almostFits(numbered.length + 1, total, limits)) return `${header}\n${numbered.join("\n")}\n`;
  let shown = 0;
  let chars = header.length + frameChars;
  while (shown < numbered.length && shown < limits.maxLines - frameLines) {
    chars += cost(numbered[shown]!);
    if (chars > limits.maxChars) break;
    shown++;
  }
  shown = Math.max(1, shown);
  const lastShown = firstLine + shown - 1;
  const next = [lastShown + 1, Math.min(firstLine + lines.length - 1, lastShown + shown)];
  const note = `<response clipped><NOTE>Only lines ${firstLine}-${lastShown} of the ${lines.length} lines asked for fit in one answer. To see the next ones, call view on this file with view_range ${pythonList(next)}; to find a line first, use search_file.</NOTE>`;
  return `${header}\n${numbered.slice(0, shown).join("\n")}\n${note}\n`;
}

export function pythonList(values: number[]): string {
  return `[${values.join(", ")}]`;
}

/** The lines `view_range` asks for, clamped to the file; a message when the range makes no sense. */
function clampRange(range: number[], count: number): { first: number; last: number; note: string } | string {
  if (range.length !== 2) return "Invalid `view_range`. It should be a list of two integers.";
  const [first, last] = range as [number, number];
  if (last !== -1 && last < first) {
    return `Invalid \`view_range\`: ${pythonList(range)}. Its second element \`${last}\` should be larger or equal than its first \`${first}\``;
  }
  // A range wholly past the end shows as many lines, ending at the last one.
  const span = last === -1 ? 1 : last - first + 1;
  const start = first > count ? Math.max(1, count - span + 1) : Math.max(1, first);
  const end = Math.max(last === -1 || last > count ? count : last, Math.min(start, count));
  const clamped = start !== first || (last !== -1 && end !== last);
  const note = clamped
    ? `Note: the file has ${count} lines; view_range ${pythonList(range)} was clamped to ${pythonList([start, end])}.\n`
    : "";
  return { first: start, last: end, note };
}

async function listDirectory(
  runtime: AciRuntime,
  context: ToolContext,
  target: RepoPath,
): Promise<ToolResult> {
  const listing = await context.sandbox.exec(
    `find ${shellQuote(target.absolute)} -maxdepth 2 -not -path '*/.*' | LC_ALL=C sort`,
    { timeoutMs: runtime.config.toolTimeoutMs },
  );
  return observation(
    `Here's the files and directories up to 2 levels deep in ${target.absolute}, excluding hidden items:\n${listing.output.replace(/\n+$/, "")}\n`,
  );
}

export function viewTool(runtime: AciRuntime): AciTool {
  const { config } = runtime;
  return defineTool({
    name: "view",
    doc: "Shows a file with `cat -n` style line numbers (optionally only the lines in view_range), or lists a directory's files up to 2 levels deep, excluding hidden items.",
    parameters: z.object({
      path: stringArg("path of the file or directory, absolute or relative to the current directory"),
      view_range: z
        .array(integerArg("line number"))
        .describe("[start_line, end_line]: show only these lines; end_line -1 means to the end of the file")
        .optional(),
    }),
    run: async (args, context) => {
      const target = resolveRepoPath(runtime.root, context.state.workingDir, args.path);
      if (!target) return observation(outsideRepositoryMessage(args.path, runtime.root));
      const read = await readTextFile(context.sandbox, target.absolute, config.maxFileBytes);
      if (!read.ok && read.reason === "is_directory") {
        if (args.view_range)
          return observation("The `view_range` parameter is not allowed when `path` points to a directory.");
        return listDirectory(runtime, context, target);
      }
      if (!read.ok) {
        if (read.reason === "not_found")
          return observation(`The path ${args.path} does not exist. Please provide a valid path.`);
        return observation(readFailureMessage(read.reason, args.path, config.maxFileBytes));
      }
      context.state.openFile = target.relative;
      if (config.lint) prewarm(target.relative, textOf(read.file));
      const lines = read.file.lines;
      const limits = outputLimits(runtime);
      if (!args.view_range) return observation(catN(lines, 1, target.absolute, limits));
      const range = clampRange(args.view_range, lines.length);
      if (typeof range === "string") return observation(range);
      const shown = lines.slice(range.first - 1, range.last);
      return observation(`${range.note}${catN(shown, range.first, target.absolute, limits)}`);
    },
  });
}
