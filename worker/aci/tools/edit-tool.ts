/** `edit START:END` replaces an inclusive line range of the open file, through the syntax gate. */
import { z } from "zod";
import { readFailureMessage, readTextFile } from "../files.js";
import { gatedReplace, rejectionMessage, uncheckedNote } from "../gated-write.js";
import { splitReplacement } from "../text-file.js";
import { type AciRuntime, type AciTool, defineTool, integerArg, observation, stringArg } from "../tool.js";
import { renderWindow, windowStartAround } from "../viewer.js";

const updated =
  "File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.";

export function editTool(runtime: AciRuntime): AciTool {
  return defineTool({
    name: "edit",
    signature: "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
    doc: "Replaces lines <start_line> through <end_line> (inclusive) of the open file with the given text. The replacement text is terminated by a line with only end_of_edit on it. All of the <replacement_text> will be entered, so make sure your indentation is formatted properly. To insert without replacing, use an <end_line> one less than <start_line>. The edited file is checked for syntax errors first: if the edit introduces one, the file is left unchanged and the error is shown; read it, fix your edit and try again (issuing the same command again gives the same error).",
    parameters: z.object({
      start_line: integerArg("the line number to start the edit at"),
      end_line: integerArg("the line number to end the edit at (inclusive)"),
      replacement_text: stringArg("the text to replace the current selection with"),
    }),
    multilineArg: "replacement_text",
    run: async (args, context) => {
      const open = context.state.openFile;
      if (open === null) return observation("No file open. Use the `open` command first.");
      const absolute = `${runtime.root}/${open}`;
      const read = await readTextFile(context.sandbox, absolute, runtime.config.maxFileBytes);
      if (!read.ok) return observation(readFailureMessage(read.reason, open, runtime.config.maxFileBytes));
      const total = read.file.lines.length;
      const { start_line: start } = args;
      // Past the last line means up to the last line: `edit 1:1` on a new, empty file is the usual first edit.
      const end = Math.min(args.end_line, total);
      if (
        start < 1 ||
        start > total + 1 ||
        args.end_line < start - 1 ||
        args.end_line > Math.max(total, start)
      ) {
        return observation(
          `Error: the line range ${args.start_line}:${args.end_line} does not fit ${open}, which has ${total} lines. ` +
            `Use 1 <= start_line <= ${total + 1} and start_line - 1 <= end_line <= ${total} (end_line = start_line - 1 inserts before start_line). The file was not changed.`,
        );
      }
      const replacement = splitReplacement(args.replacement_text);
      const result = await gatedReplace({
        sandbox: context.sandbox,
        absolute,
        relative: open,
        file: read.file,
        start,
        end,
        replacement,
        lint: runtime.config.lint,
      });
      if (!result.written) {
        return observation(
          rejectionMessage({
            path: open,
            errors: result.errors,
            original: read.file,
            proposed: result.proposed,
            start,
            end,
            newLineCount: replacement.length,
          }),
        );
      }
      const lines = result.file.lines;
      context.state.windowStart = windowStartAround(start, lines.length, runtime.config.window);
      const parts = [renderWindow(open, lines, context.state.windowStart, runtime.config.window), updated];
      if (runtime.config.lint && !result.checked) parts.push(uncheckedNote(open));
      return observation(parts.join("\n"));
    },
  });
}
