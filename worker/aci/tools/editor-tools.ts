/**
 * The `editor` bundle (str_replace style, as many current models are trained on): view, create,
 * str_replace, insert, undo_edit. Texts follow SWE-agent's str_replace_editor. Edits go through the
 * same syntax gate as `edit`; paths may be absolute or relative to the current directory.
 */
import { z } from "zod";
import type { ToolContext } from "../../../src/contracts.js";
import { readFailureMessage, readTextFile } from "../files.js";
import { gatedReplace, gatedWrite, rejectionMessage } from "../gated-write.js";
import { outsideRepositoryMessage, resolveRepoPath } from "../paths.js";
import { parseTextFile, splitReplacement, type TextFile } from "../text-file.js";
import { type AciRuntime, type AciTool, defineTool, integerArg, observation, stringArg } from "../tool.js";
import { catN, pythonList, viewTool } from "./editor-view.js";

const snippetLines = 4;

export function editorTools(runtime: AciRuntime): AciTool[] {
  const { config } = runtime;
  const locate = (context: ToolContext, input: string) =>
    resolveRepoPath(runtime.root, context.state.workingDir, input);
  const remember = (absolute: string, data: Buffer) => {
    const history = runtime.editHistory.get(absolute) ?? [];
    history.push(data);
    runtime.editHistory.set(absolute, history);
  };
  const readForEdit = async (context: ToolContext, input: string) => {
    const target = locate(context, input);
    if (!target) return { ok: false, message: outsideRepositoryMessage(input, runtime.root) } as const;
    const read = await readTextFile(context.sandbox, target.absolute, config.maxFileBytes);
    if (!read.ok) {
      if (read.reason === "not_found")
        return {
          ok: false,
          message: `The path ${input} does not exist. Please provide a valid path.`,
        } as const;
      if (read.reason === "is_directory") {
        return {
          ok: false,
          message: `The path ${input} is a directory and only the \`view\` command can be used on directories`,
        } as const;
      }
      return { ok: false, message: readFailureMessage(read.reason, input, config.maxFileBytes) } as const;
    }
    context.state.openFile = target.relative;
    return { ok: true, target, data: read.data, file: read.file } as const;
  };
  const gated = async (
    context: ToolContext,
    target: { absolute: string; relative: string },
    file: TextFile,
    start: number,
    end: number,
    replacement: string[],
  ) => {
    const result = await gatedReplace({
      sandbox: context.sandbox,
      absolute: target.absolute,
      relative: target.relative,
      file,
      start,
      end,
      replacement,
      lint: config.lint,
    });
    if (!result.written) {
      return {
        ok: false,
        message: rejectionMessage({
          path: target.relative,
          errors: result.errors,
          original: file,
          proposed: result.proposed,
          start,
          end,
          newLineCount: replacement.length,
        }),
      } as const;
    }
    const note = [result.diff, ...result.warnings].map((line) => (line ? `\n${line}` : "")).join("");
    return { ok: true, file: result.file, note } as const;
  };

  const create = defineTool({
    name: "create",
    doc: "Creates a file with the given text. Refuses if the path already exists. The text is checked for syntax errors first.",
    parameters: z.object({
      path: stringArg("path of the new file, absolute or relative to the current directory"),
      file_text: stringArg("the content of the new file"),
    }),
    multilineArg: "file_text",
    run: async (args, context) => {
      const target = locate(context, args.path);
      if (!target || target.relative === "")
        return observation(outsideRepositoryMessage(args.path, runtime.root));
      const existing = await readTextFile(context.sandbox, target.absolute, config.maxFileBytes);
      if (existing.ok || existing.reason !== "not_found") {
        return observation(
          `File already exists at: ${target.absolute}. Cannot overwrite files using command \`create\`.`,
        );
      }
      const empty = parseTextFile(Buffer.alloc(0));
      const proposed = parseTextFile(Buffer.from(args.file_text, "utf8"));
      const result = await gatedWrite({
        sandbox: context.sandbox,
        absolute: target.absolute,
        relative: target.relative,
        file: empty,
        proposed,
        span: { start: 1, end: 0, newLineCount: proposed.lines.length },
        lint: config.lint,
      });
      if (!result.written) {
        return observation(
          rejectionMessage({
            path: target.relative,
            errors: result.errors,
            original: empty,
            proposed,
            start: 1,
            end: 0,
            newLineCount: proposed.lines.length,
          }),
        );
      }
      const note = result.warnings.map((line) => `\n${line}`).join("");
      remember(target.absolute, Buffer.alloc(0));
      context.state.openFile = target.relative;
      return observation(`File created successfully at: ${target.absolute}${note}`);
    },
  });

  const strReplace = defineTool({
    name: "str_replace",
    doc: "Replaces old_str with new_str in the file. old_str must match exactly one place in the file, including whitespace and indentation; if it matches none or several, nothing is changed and you are told where it matched. The edited file is checked for syntax errors first.",
    parameters: z.object({
      path: stringArg("path of the file, absolute or relative to the current directory"),
      old_str: stringArg("the exact text to replace").min(1),
      new_str: stringArg("the text to put in its place (empty to delete old_str)").optional(),
    }),
    run: async (args, context) => {
      const read = await readForEdit(context, args.path);
      if (!read.ok) return observation(read.message);
      const { target, file } = read;
      const text = file.lines.join("\n") + (file.eols.at(-1) ? "\n" : "");
      const oldStr = args.old_str.replace(/\r\n/g, "\n");
      const newStr = (args.new_str ?? "").replace(/\r\n/g, "\n");
      const positions: number[] = [];
      for (let at = text.indexOf(oldStr); at !== -1; at = text.indexOf(oldStr, at + 1)) positions.push(at);
      if (positions.length === 0) {
        return observation(
          `No replacement was performed, old_str \`${args.old_str}\` did not appear verbatim in ${target.absolute}.`,
        );
      }
      const lineOf = (offset: number) => text.slice(0, offset).split("\n").length;
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
      const startLine = lineOf(at);
      const endLine = Math.min(lineOf(at + oldStr.length), file.lines.length);
      const regionStart = text.lastIndexOf("\n", at - 1) + 1;
      const region = file.lines.slice(startLine - 1, endLine).join("\n");
      const replaced =
        region.slice(0, at - regionStart) + newStr + region.slice(at - regionStart + oldStr.length);
      const result = await gated(context, target, file, startLine, endLine, replaced.split("\n"));
      if (!result.ok) return observation(result.message);
      remember(target.absolute, read.data);
      const lines = result.file.lines;
      const first = Math.max(1, startLine - 1 - snippetLines);
      const last = Math.min(startLine - 1 + snippetLines + (newStr.match(/\n/g)?.length ?? 0), lines.length);
      return observation(
        `The file ${target.absolute} has been edited. ${catN(lines.slice(first - 1, last), first, `a snippet of ${target.absolute}`)}` +
          `Review the changes and make sure they are as expected. Edit the file again if necessary.${result.note}`,
      );
    },
  });

  const insert = defineTool({
    name: "insert",
    doc: "Inserts new_str after line insert_line of the file (0 inserts at the top). The edited file is checked for syntax errors first.",
    parameters: z.object({
      path: stringArg("path of the file, absolute or relative to the current directory"),
      insert_line: integerArg("the line after which to insert (0 for the top of the file)"),
      new_str: stringArg("the text to insert"),
    }),
    multilineArg: "new_str",
    run: async (args, context) => {
      const read = await readForEdit(context, args.path);
      if (!read.ok) return observation(read.message);
      const { target, file } = read;
      const count = file.lines.length;
      if (args.insert_line < 0 || args.insert_line > count) {
        return observation(
          `Invalid \`insert_line\` parameter: ${args.insert_line}. It should be within the range of lines of the file: ${pythonList([0, count])}`,
        );
      }
      const newLines = splitReplacement(args.new_str);
      const result = await gated(context, target, file, args.insert_line + 1, args.insert_line, newLines);
      if (!result.ok) return observation(result.message);
      remember(target.absolute, read.data);
      const at = args.insert_line;
      const snippet = [
        ...file.lines.slice(Math.max(0, at - snippetLines), at),
        ...newLines,
        ...file.lines.slice(at, at + snippetLines),
      ];
      return observation(
        `The file ${target.absolute} has been edited. ${catN(snippet, Math.max(1, at - snippetLines + 1), "a snippet of the edited file")}` +
          `Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.${result.note}`,
      );
    },
  });

  const undoEdit = defineTool({
    name: "undo_edit",
    doc: "Reverts the last edit made to the file by create, str_replace or insert.",
    parameters: z.object({
      path: stringArg("path of the file, absolute or relative to the current directory"),
    }),
    run: async (args, context) => {
      const target = locate(context, args.path);
      if (!target) return observation(outsideRepositoryMessage(args.path, runtime.root));
      const previous = runtime.editHistory.get(target.absolute)?.pop();
      if (previous === undefined) return observation(`No edit history found for ${target.absolute}.`);
      await context.sandbox.writeFile(target.absolute, previous);
      const lines = parseTextFile(previous).lines;
      return observation(
        `Last edit to ${target.absolute} undone successfully. ${catN(lines, 1, target.absolute)}`,
      );
    },
  });

  return [viewTool(runtime), create, strReplace, insert, undoEdit];
}
