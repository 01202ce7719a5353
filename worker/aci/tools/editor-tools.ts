/**
 * The `editor` bundle (str_replace style, as many current models are trained on): view, create,
 * str_replace, insert, undo_edit. Texts follow SWE-agent's str_replace_editor. Edits go through the
 * same syntax gate as `edit`; paths may be absolute or relative to the current directory.
 */
import { z } from "zod";
import type { ToolContext } from "../../../src/shared/contracts.js";
import { readTextFile } from "../files.js";
import { gatedWrite } from "../gated-write.js";
import { outsideRepositoryMessage } from "../paths.js";
import { parseTextFile, splitReplacement } from "../text-file.js";
import {
  type AciRuntime,
  type AciTool,
  defineTool,
  integerArg,
  observation,
  stringArg,
  written,
} from "../tool.js";
import { editorRejection, gatedEdit, locate, readForEdit, remember } from "./editor-edit.js";
import { catN, outputLimits, pythonList, viewTool } from "./editor-view.js";
import { missExplanation } from "./str-replace-miss.js";

/** Lines of context around an edit or an undone edit. */
const snippetLines = 4;

/** `cat -n` of lines first..last (1-based, clamped to the file) as "a snippet of" the file. */
function snippet(runtime: AciRuntime, lines: readonly string[], first: number, last: number, of: string) {
  const from = Math.max(1, first);
  const to = Math.min(last, lines.length);
  return catN(lines.slice(from - 1, to), from, `a snippet of ${of}`, outputLimits(runtime));
}

function createTool(runtime: AciRuntime): AciTool {
  return defineTool({
    name: "create",
    doc: "Creates a file with the given text. Refuses if the path already exists. The text is checked for syntax errors first.",
    parameters: z.object({
      path: stringArg("path of the new file, absolute or relative to the current directory"),
      file_text: stringArg("the content of the new file"),
    }),
    multilineArg: "file_text",
    run: async (args, context) => {
      const target = locate(runtime, context, args.path);
      if (!target || target.relative === "")
        return observation(outsideRepositoryMessage(args.path, runtime.root));
      const existing = await readTextFile(context.sandbox, target.absolute, runtime.config.maxFileBytes);
      if (existing.ok || existing.reason !== "not_found") {
        return observation(
          `File already exists at: ${target.absolute}. Cannot overwrite files using command \`create\`.`,
        );
      }
      const empty = parseTextFile(Buffer.alloc(0));
      const proposed = parseTextFile(Buffer.from(args.file_text, "utf8"));
      const span = { start: 1, end: 0, newLineCount: proposed.lines.length };
      const { sandbox } = context;
      const { absolute, relative } = target;
      const result = await gatedWrite({
        sandbox,
        absolute,
        relative,
        file: empty,
        proposed,
        span,
        lint: runtime.config.lint,
      });
      if (!result.written) {
        const { errors } = result;
        return observation(
          editorRejection("create", { path: relative, errors, original: empty, proposed, ...span }),
        );
      }
      remember(runtime, absolute, Buffer.alloc(0));
      context.state.openFile = relative;
      return written(
        `File created successfully at: ${absolute}${result.warnings.map((line) => `\n${line}`).join("")}`,
      );
    },
  });
}

/** Offsets of every occurrence of `needle` in `text`. */
function occurrences(text: string, needle: string): number[] {
  const positions: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) positions.push(at);
  return positions;
}

async function strReplace(
  runtime: AciRuntime,
  context: ToolContext,
  args: { path: string; old_str: string; new_str?: string | undefined },
) {
  const read = await readForEdit(runtime, context, args.path);
  if (!read.ok) return observation(read.message);
  const { target, file } = read;
  const text = file.lines.join("\n") + (file.eols.at(-1) ? "\n" : "");
  const oldStr = args.old_str.replace(/\r\n/g, "\n");
  const newStr = (args.new_str ?? "").replace(/\r\n/g, "\n");
  const positions = occurrences(text, oldStr);
  const lineOf = (offset: number) => text.slice(0, offset).split("\n").length;
  if (positions.length === 0) {
    return observation(
      `No replacement was performed, old_str \`${args.old_str}\` did not appear verbatim in ${target.absolute}.\n${missExplanation(file.lines, oldStr)}`,
    );
  }
  if (positions.length > 1) {
    return observation(
      `No replacement was performed. Multiple occurrences of old_str \`${args.old_str}\` in lines ${pythonList(positions.map(lineOf))}. Please ensure it is unique`,
    );
  }
  if (newStr === oldStr) {
    return observation(
      `No replacement was performed, old_str \`${args.old_str}\` is the same as new_str \`${args.new_str ?? ""}\`.`,
    );
  }
  const at = positions[0]!;
  const start = lineOf(at);
  const end = Math.min(lineOf(at + oldStr.length), file.lines.length);
  const regionStart = text.lastIndexOf("\n", at - 1) + 1;
  const region = file.lines.slice(start - 1, end).join("\n");
  const replaced =
    region.slice(0, at - regionStart) + newStr + region.slice(at - regionStart + oldStr.length);
  const result = await gatedEdit(runtime, context, "str_replace", {
    target,
    file,
    start,
    end,
    replacement: replaced.split("\n"),
  });
  if (!result.ok) return observation(result.message);
  remember(runtime, target.absolute, read.data);
  const last = start - 1 + snippetLines + (newStr.match(/\n/g)?.length ?? 0);
  const shown = snippet(runtime, result.file.lines, start - 1 - snippetLines, last, target.absolute);
  return written(
    `The file ${target.absolute} has been edited. ${shown}Review the changes and make sure they are as expected. Edit the file again if necessary.${result.note}`,
  );
}

function strReplaceTool(runtime: AciRuntime): AciTool {
  return defineTool({
    name: "str_replace",
    doc: "Replaces old_str with new_str in the file. old_str must match exactly one place in the file, including whitespace and indentation; if it matches none or several, nothing is changed and you are told where it matched or what is closest. The edited file is checked for syntax errors first.",
    parameters: z.object({
      path: stringArg("path of the file, absolute or relative to the current directory"),
      old_str: stringArg("the exact text to replace").min(1),
      new_str: stringArg("the text to put in its place (empty to delete old_str)").optional(),
    }),
    run: (args, context) => strReplace(runtime, context, args),
  });
}

function insertTool(runtime: AciRuntime): AciTool {
  return defineTool({
    name: "insert",
    doc: "Inserts new_str after line insert_line of the file (0 inserts at the top). The edited file is checked for syntax errors first.",
    parameters: z.object({
      path: stringArg("path of the file, absolute or relative to the current directory"),
      insert_line: integerArg("the line after which to insert (0 for the top of the file)"),
      new_str: stringArg("the text to insert"),
    }),
    multilineArg: "new_str",
    run: async (args, context) => {
      const read = await readForEdit(runtime, context, args.path);
      if (!read.ok) return observation(read.message);
      const { target, file } = read;
      const at = args.insert_line;
      if (at < 0 || at > file.lines.length) {
        return observation(
          `Invalid \`insert_line\` parameter: ${at}. It should be within the range of lines of the file: ${pythonList([0, file.lines.length])}`,
        );
      }
      const replacement = splitReplacement(args.new_str);
      const result = await gatedEdit(runtime, context, "insert", {
        target,
        file,
        start: at + 1,
        end: at,
        replacement,
      });
      if (!result.ok) return observation(result.message);
      remember(runtime, target.absolute, read.data);
      const last = at + replacement.length + snippetLines;
      const shown = snippet(runtime, result.file.lines, at - snippetLines + 1, last, "the edited file");
      return written(
        `The file ${target.absolute} has been edited. ${shown}Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.${result.note}`,
      );
    },
  });
}

/** The lines of `after` that differ from `before`: first line (1-based) and count, common ends excluded. */
function changedLines(before: readonly string[], after: readonly string[]) {
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  const rest = Math.min(before.length, after.length) - prefix;
  while (suffix < rest && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) suffix++;
  return { start: prefix + 1, count: after.length - prefix - suffix };
}

function undoEditTool(runtime: AciRuntime): AciTool {
  return defineTool({
    name: "undo_edit",
    doc: "Reverts the last edit made to the file by create, str_replace or insert, and shows the lines it restored.",
    parameters: z.object({
      path: stringArg("path of the file, absolute or relative to the current directory"),
    }),
    run: async (args, context) => {
      const target = locate(runtime, context, args.path);
      if (!target) return observation(outsideRepositoryMessage(args.path, runtime.root));
      const previous = runtime.editHistory.get(target.absolute)?.pop();
      if (previous === undefined) return observation(`No edit history found for ${target.absolute}.`);
      const current = await readTextFile(context.sandbox, target.absolute, runtime.config.maxFileBytes);
      await context.sandbox.writeFile(target.absolute, previous);
      const lines = parseTextFile(previous).lines;
      const done = `Last edit to ${target.absolute} undone successfully`;
      if (lines.length === 0) return observation(`${done}: the file is empty again.`);
      const { start, count } = changedLines(current.ok ? current.file.lines : [], lines);
      const what =
        count === 0
          ? `the lines it had added before line ${start} are removed`
          : count === 1
            ? `line ${start} is as it was before it`
            : `lines ${start}-${start + count - 1} are as they were before it`;
      const shown = snippet(
        runtime,
        lines,
        start - snippetLines,
        start + count - 1 + snippetLines,
        target.absolute,
      );
      return observation(`${done}: ${what}. ${shown}`);
    },
  });
}

export function editorTools(runtime: AciRuntime): AciTool[] {
  return [
    viewTool(runtime),
    createTool(runtime),
    strReplaceTool(runtime),
    insertTool(runtime),
    undoEditTool(runtime),
  ];
}
