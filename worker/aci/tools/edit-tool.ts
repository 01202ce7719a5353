/** `edit START:END` replaces an inclusive line range of the open file, through the syntax gate. */
import { z } from "zod";
import { anchorMatches, anchorMismatch, editedRegion, updatedMessage } from "../edit-feedback.js";
import { readFailureMessage, readTextFile } from "../files.js";
import { gatedReplace, rejectionMessage } from "../gated-write.js";
import { splitReplacement } from "../text-file.js";
import {
  type AciRuntime,
  type AciTool,
  defineTool,
  integerArg,
  observation,
  stringArg,
  written,
} from "../tool.js";
import { windowStartAround } from "../viewer.js";

const markerNote =
  "(The last line of replacement_text was end_of_edit, the end marker of the text-mode syntax; it was left out of the file. With function calls, replacement_text holds only the new lines.)";

/**
 * A function-calling model may copy the text syntax's terminator into the argument (indented like the
 * code, or with the closing fence after it); it is never content.
 */
function withoutEndMarker(text: string): { text: string; markerDropped: boolean } {
  const match = /(^|\n)[ \t]*end_of_edit[ \t]*(\r?\n[ \t]*```[ \t]*)?\s*$/.exec(text);
  if (!match) return { text, markerDropped: false };
  return { text: text.slice(0, match.index + match[1]!.length), markerDropped: true };
}

export function editTool(runtime: AciRuntime): AciTool {
  return defineTool({
    name: "edit",
    signature: "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
    doc: "Replaces lines start_line to end_line (inclusive) of the open file with replacement_text, exactly as given: mind the indentation. Its final newline is optional (to add an empty last line, end with an empty line). To insert, use end_line = start_line - 1. An edit that introduces a syntax error is refused, the file left unchanged and the error shown: fix the edit, since sending it again gives the same error.",
    parameters: z.object({
      start_line: integerArg("the first line to replace"),
      end_line: integerArg("the last line to replace"),
      replacement_text: stringArg("the new lines"),
      expected_text: stringArg(
        "those lines (or their first; for an insertion, line start_line) as you last saw them: if the file no longer has them there, the edit is refused and the current lines shown",
      ).optional(),
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
      if (args.expected_text !== undefined && !anchorMatches(read.file.lines, start, end, args.expected_text))
        return observation(anchorMismatch(open, read.file.lines, start, end));
      const { text, markerDropped } = withoutEndMarker(args.replacement_text);
      const replacement = splitReplacement(text);
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
      const parts = [editedRegion(open, lines, start, replacement.length)];
      if (result.diff) parts.push(result.diff);
      parts.push(updatedMessage(start, replacement.length), ...result.warnings);
      if (markerDropped) parts.push(markerNote);
      return written(parts.join("\n"));
    },
  });
}
