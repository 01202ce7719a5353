/** The windowed viewer: open, goto, scroll_up, scroll_down, and create (which opens what it creates). */
import { z } from "zod";
import type { ToolContext, ToolResult } from "../../../src/shared/contracts.js";
import { readFailureMessage, readTextFile } from "../files.js";
import { prewarm } from "../lint/gate.js";
import { displayPath, outsideRepositoryMessage, resolveRepoPath } from "../paths.js";
import { textOf } from "../text-file.js";
import {
  type AciRuntime,
  type AciTool,
  defineTool,
  integerArg,
  noFileOpen,
  observation,
  stringArg,
} from "../tool.js";
import { renderWindow, scrolledWindowStart, windowStartFor } from "../viewer.js";

/** Reads the open file for a viewer command; a message when there is none or it has gone. */
async function readOpenFile(
  runtime: AciRuntime,
  context: ToolContext,
): Promise<{ ok: false; message: string } | { ok: true; path: string; lines: string[] }> {
  const open = context.state.openFile;
  if (open === null) return { ok: false, message: noFileOpen };
  const read = await readTextFile(context.sandbox, `${runtime.root}/${open}`, runtime.config.maxFileBytes);
  if (!read.ok) {
    if (read.reason === "not_found") {
      context.state.openFile = null;
      return {
        ok: false,
        message: `Error: the open file ${open} no longer exists (removed or renamed). Use open to open another file.`,
      };
    }
    return { ok: false, message: readFailureMessage(read.reason, open, runtime.config.maxFileBytes) };
  }
  return { ok: true, path: open, lines: read.file.lines };
}

async function openFile(
  runtime: AciRuntime,
  context: ToolContext,
  input: string,
  lineNumber?: number,
): Promise<ToolResult> {
  const target = resolveRepoPath(runtime.root, context.state.workingDir, input);
  if (!target) return observation(outsideRepositoryMessage(input, runtime.root));
  const read = await readTextFile(context.sandbox, target.absolute, runtime.config.maxFileBytes);
  if (!read.ok) return observation(readFailureMessage(read.reason, input, runtime.config.maxFileBytes));
  const { lines } = read.file;
  const window = runtime.config.window;
  const warnings: string[] = [];
  let start = 1;
  if (lineNumber !== undefined) {
    let line = lineNumber;
    if (line > lines.length) {
      warnings.push(
        `Warning: <line_number> (${line}) is greater than the number of lines in the file (${lines.length})`,
      );
      warnings.push(`Warning: Setting <line_number> to ${lines.length}`);
      line = lines.length;
    } else if (line < 1) {
      warnings.push(`Warning: <line_number> (${line}) is less than 1`, "Warning: Setting <line_number> to 1");
      line = 1;
    }
    start = windowStartFor(line, lines.length, window);
  }
  context.state.openFile = target.relative;
  context.state.windowStart = start;
  if (runtime.config.lint) prewarm(target.relative, textOf(read.file));
  return observation(
    [...warnings, renderWindow(displayPath(target.relative), lines, start, window)].join("\n"),
  );
}

export function viewerTools(runtime: AciRuntime): AciTool[] {
  const window = runtime.config.window;
  const open = defineTool({
    name: "open",
    doc: `Opens the file at the given path in the editor, showing ${window} lines at a time with their line numbers.`,
    parameters: z.object({
      path: stringArg("the file, relative to the current directory"),
      line_number: integerArg("a line for the window to include (default: the top of the file)").optional(),
    }),
    run: (args, context) => openFile(runtime, context, args.path, args.line_number),
  });
  const goto = defineTool({
    name: "goto",
    doc: "Moves the window of the open file to show line_number.",
    parameters: z.object({ line_number: integerArg("the line to show") }),
    run: async (args, context) => {
      const file = await readOpenFile(runtime, context);
      if (!file.ok) return observation(file.message);
      if (args.line_number > file.lines.length) {
        return observation(`Error: <line> must be less than or equal to ${file.lines.length}`);
      }
      if (args.line_number < 1) return observation("Error: <line> must be greater than or equal to 1");
      context.state.windowStart = windowStartFor(args.line_number, file.lines.length, window);
      return observation(renderWindow(file.path, file.lines, context.state.windowStart, window));
    },
  });
  const scroll = (direction: 1 | -1) =>
    defineTool({
      name: direction === 1 ? "scroll_down" : "scroll_up",
      doc: `Moves the window ${direction === 1 ? "down" : "up"} ${window - runtime.config.scrollOverlap} lines.`,
      parameters: z.object({}),
      run: async (_args, context) => {
        const file = await readOpenFile(runtime, context);
        if (!file.ok) return observation(file.message);
        const { state } = context;
        state.windowStart = scrolledWindowStart(
          state.windowStart,
          file.lines.length,
          window,
          runtime.config.scrollOverlap,
          direction,
        );
        return observation(renderWindow(file.path, file.lines, state.windowStart, window));
      },
    });
  const create = defineTool({
    name: "create",
    doc: "Creates an empty file and opens it; refuses a file that exists.",
    parameters: z.object({
      filename: stringArg("the new file, relative to the current directory"),
    }),
    run: async (args, context) => {
      const target = resolveRepoPath(runtime.root, context.state.workingDir, args.filename);
      if (!target || target.relative === "")
        return observation(outsideRepositoryMessage(args.filename, runtime.root));
      const existing = await readTextFile(context.sandbox, target.absolute, runtime.config.maxFileBytes);
      if (existing.ok || existing.reason !== "not_found") {
        const shown = await openFile(runtime, context, args.filename);
        return observation(`Error: File '${args.filename}' already exists.\n${shown.observation}`);
      }
      await context.sandbox.writeFile(target.absolute, "");
      return { ...(await openFile(runtime, context, args.filename)), edited: true };
    },
  });
  return [open, goto, scroll(-1), scroll(1), create];
}
