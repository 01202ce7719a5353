/**
 * What the editing tools of the `editor` bundle share: reading the file to edit, writing through the
 * syntax gate, the rejection text in this bundle's words, and the history `undo_edit` walks back.
 */
import type { ToolContext } from "../../../src/shared/contracts.js";
import { readFailureMessage, readTextFile } from "../files.js";
import { gatedReplace, rejectionMessage } from "../gated-write.js";
import { outsideRepositoryMessage, type RepoPath, resolveRepoPath } from "../paths.js";
import type { TextFile } from "../text-file.js";
import type { AciRuntime } from "../tool.js";

type EditorTool = "create" | "str_replace" | "insert";

type Failure = { ok: false; message: string };

export function locate(runtime: AciRuntime, context: ToolContext, input: string): RepoPath | null {
  return resolveRepoPath(runtime.root, context.state.workingDir, input);
}

export function remember(runtime: AciRuntime, absolute: string, data: Buffer): void {
  const history = runtime.editHistory.get(absolute) ?? [];
  history.push(data);
  runtime.editHistory.set(absolute, history);
}

/** The file a tool is about to edit. The open file changes only when the edit is written. */
export async function readForEdit(
  runtime: AciRuntime,
  context: ToolContext,
  input: string,
): Promise<Failure | { ok: true; target: RepoPath; data: Buffer; file: TextFile }> {
  const target = locate(runtime, context, input);
  if (!target) return { ok: false, message: outsideRepositoryMessage(input, runtime.root) };
  const maxBytes = runtime.config.maxFileBytes;
  const read = await readTextFile(context.sandbox, target.absolute, maxBytes);
  if (read.ok) return { ok: true, target, data: read.data, file: read.file };
  if (read.reason === "not_found")
    return { ok: false, message: `The path ${input} does not exist. Please provide a valid path.` };
  if (read.reason === "is_directory") {
    return {
      ok: false,
      message: `The path ${input} is a directory and only the \`view\` command can be used on directories`,
    };
  }
  return { ok: false, message: readFailureMessage(read.reason, input, maxBytes) };
}

/** What to do after a rejected edit, in the words of the tool that made it. */
const retryAdvice: Record<EditorTool, string> = {
  create: "Correct file_text and call create again.",
  str_replace:
    "Correct new_str (it replaces old_str; the lines around old_str stay as they are) and call str_replace again.",
  insert:
    "Correct new_str or insert_line (new_str goes after line insert_line, indented as the lines around it) and call insert again.",
};

/**
 * The gate's rejection with its closing advice in this bundle's words: the shared text ends by telling
 * the `aci` bundle to fix the start/end line arguments of `edit`, which this bundle does not have.
 */
export function editorRejection(tool: EditorTool, options: Parameters<typeof rejectionMessage>[0]): string {
  const lines = rejectionMessage(options).split("\n");
  const closing = lines.findIndex((line) => line.startsWith("Your changes have NOT been applied"));
  return [
    ...(closing === -1 ? lines : lines.slice(0, closing)),
    "Your changes have NOT been applied, and the file is as it was.",
    retryAdvice[tool],
    "DO NOT send the same edit again: it will be rejected the same way.",
  ].join("\n");
}

/** Replaces lines start..end through the gate; on success the file becomes the open file. */
export async function gatedEdit(
  runtime: AciRuntime,
  context: ToolContext,
  tool: EditorTool,
  edit: { target: RepoPath; file: TextFile; start: number; end: number; replacement: string[] },
): Promise<Failure | { ok: true; file: TextFile; note: string }> {
  const { target, file, start, end, replacement } = edit;
  const result = await gatedReplace({
    sandbox: context.sandbox,
    absolute: target.absolute,
    relative: target.relative,
    file,
    start,
    end,
    replacement,
    lint: runtime.config.lint,
  });
  if (!result.written) {
    const { errors, proposed } = result;
    const options = { path: target.relative, errors, original: file, proposed, start, end };
    return { ok: false, message: editorRejection(tool, { ...options, newLineCount: replacement.length }) };
  }
  context.state.openFile = target.relative;
  const note = [result.diff, ...result.warnings].map((line) => (line ? `\n${line}` : "")).join("");
  return { ok: true, file: result.file, note };
}
