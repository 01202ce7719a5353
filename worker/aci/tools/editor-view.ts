/** `view` of the editor bundle: a file as `cat -n` shows it (optionally a line range), or a directory listing. */
import { z } from "zod";
import { readFailureMessage, readTextFile } from "../files.js";
import { prewarm } from "../lint/gate.js";
import { outsideRepositoryMessage, resolveRepoPath, shellQuote } from "../paths.js";
import { textOf } from "../text-file.js";
import { type AciRuntime, type AciTool, defineTool, integerArg, observation, stringArg } from "../tool.js";

const maxResponseChars = 16_000;
const truncatedNote =
  "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";

/** `cat -n` style: the line number right-aligned in 6 columns, a tab, the line. */
export function catN(lines: readonly string[], firstLine: number, descriptor: string): string {
  let content = lines.join("\n");
  if (content.length > maxResponseChars) content = content.slice(0, maxResponseChars) + truncatedNote;
  const numbered = content
    .split("\n")
    .map((line, index) => `${String(index + firstLine).padStart(6)}\t${line}`);
  return `Here's the result of running \`cat -n\` on ${descriptor}:\n${numbered.join("\n")}\n`;
}

export function pythonList(values: number[]): string {
  return `[${values.join(", ")}]`;
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
        const listing = await context.sandbox.exec(
          `find ${shellQuote(target.absolute)} -maxdepth 2 -not -path '*/.*' | LC_ALL=C sort`,
          {
            timeoutMs: config.toolTimeoutMs,
          },
        );
        return observation(
          `Here's the files and directories up to 2 levels deep in ${target.absolute}, excluding hidden items:\n${listing.output.replace(/\n+$/, "")}\n`,
        );
      }
      if (!read.ok) {
        if (read.reason === "not_found")
          return observation(`The path ${args.path} does not exist. Please provide a valid path.`);
        return observation(readFailureMessage(read.reason, args.path, config.maxFileBytes));
      }
      context.state.openFile = target.relative;
      if (config.lint) prewarm(target.relative, textOf(read.file));
      const lines = read.file.lines;
      if (!args.view_range) return observation(catN(lines, 1, target.absolute));
      const range = args.view_range;
      if (range.length !== 2)
        return observation("Invalid `view_range`. It should be a list of two integers.");
      const [first, last] = range as [number, number];
      const count = lines.length;
      if (first < 1 || first > count) {
        return observation(
          `Invalid \`view_range\`: ${pythonList(range)}. Its first element \`${first}\` should be within the range of lines of the file: ${pythonList([1, count])}`,
        );
      }
      if (last > count) {
        return observation(
          `Invalid \`view_range\`: ${pythonList(range)}. Its second element \`${last}\` should be smaller than the number of lines in the file: \`${count}\``,
        );
      }
      if (last !== -1 && last < first) {
        return observation(
          `Invalid \`view_range\`: ${pythonList(range)}. Its second element \`${last}\` should be larger or equal than its first \`${first}\``,
        );
      }
      const end = last === -1 ? count : last;
      return observation(catN(lines.slice(first - 1, end), first, target.absolute));
    },
  });
}
