/**
 * Every edit of both bundles goes through here: the file as it would be is checked by the syntax gate
 * (Python: by the sandbox's python3, on the file written in place and restored when rejected; else on
 * the host), and only an edit that introduces no new syntax error is kept.
 */
import type { Sandbox } from "../../src/shared/contracts.js";
import { commentedOutWarning, editDiff, indentationWarning } from "./edit-feedback.js";
import { checkEdit, type EditSpan } from "./lint/gate.js";
import { checkersFor } from "./lint/languages.js";
import { pythonCheckedWrite } from "./lint/sandbox-parsers.js";
import type { SyntaxProblem } from "./lint/syntax-errors.js";
import { newUndefinedNamesWarning } from "./lint/undefined-names.js";
import { replaceLines, serializeTextFile, type TextFile, textOf } from "./text-file.js";
import { renderWindow } from "./viewer.js";

type GatedWrite =
  | {
      written: true;
      file: TextFile;
      /** What a replacement removed and added (gatedReplace), null when it removed nothing. */
      diff: string | null;
      /** Lines for the model after the edit's own answer: what looks wrong, and an unchecked language. */
      warnings: string[];
    }
  | { written: false; errors: SyntaxProblem[]; proposed: TextFile };

const rule = "-------------------------------------------------";

/**
 * Python, when the sandbox's python3 accepted the file before the edit: it decides (and has written
 * the file when it accepts). Null: not decided there; the file is unchanged.
 */
async function pythonVerdict(options: GateInput): Promise<SyntaxProblem[] | null> {
  const isPython = checkersFor(options.relative).some(
    (checker) => checker.kind === "tree-sitter" && checker.grammar === "python",
  );
  if (!isPython) return null;
  return pythonCheckedWrite({
    sandbox: options.sandbox,
    absolute: options.absolute,
    before: { text: textOf(options.file), data: serializeTextFile(options.file) },
    after: { text: textOf(options.proposed), data: serializeTextFile(options.proposed) },
  });
}

interface GateInput {
  sandbox: Sandbox;
  absolute: string;
  /** The path the syntax checker is chosen by. */
  relative: string;
  file: TextFile;
  proposed: TextFile;
  span: EditSpan;
  lint: boolean;
}

/** Writes `proposed` over `file` only when the gate finds no new error in the changed span. */
export async function gatedWrite(options: GateInput): Promise<GatedWrite> {
  const { file, proposed } = options;
  let checked = false;
  const python = options.lint ? await pythonVerdict(options) : null;
  if (python && python.length > 0) return { written: false, errors: python, proposed };
  if (python) {
    checked = true;
  } else {
    if (options.lint) {
      const verdict = await checkEdit(options.relative, textOf(file), textOf(proposed), options.span);
      if (verdict.checked && verdict.newErrors.length > 0)
        return { written: false, errors: verdict.newErrors, proposed };
      checked = verdict.checked;
    }
    await options.sandbox.writeFile(options.absolute, serializeTextFile(proposed));
  }
  // Beyond syntax: names the edit left undefined, a warning only (the edit is written either way);
  // a check that fails gives no warning.
  const undefinedNames = options.lint
    ? await newUndefinedNamesWarning(options.relative, textOf(file), textOf(proposed)).catch(() => null)
    : null;
  const warnings = [undefinedNames, options.lint && !checked ? uncheckedNote(options.relative) : null];
  return { written: true, file: proposed, diff: null, warnings: warnings.filter(isText) };
}

const isText = (value: string | null): value is string => value !== null;

/**
 * Replaces lines start..end of `file` with `replacement`, writing only when the gate lets it pass; an
 * accepted replacement comes with its diff and the warnings about its lines.
 */
export async function gatedReplace(options: {
  sandbox: Sandbox;
  absolute: string;
  relative: string;
  file: TextFile;
  start: number;
  end: number;
  replacement: string[];
  lint: boolean;
}): Promise<GatedWrite> {
  const { file, start, end, replacement } = options;
  const result = await gatedWrite({
    ...options,
    proposed: replaceLines(file, start, end, replacement),
    span: { start, end, newLineCount: replacement.length },
  });
  if (!result.written) return result;
  const own = [
    commentedOutWarning(options.relative, file.lines, start, end, replacement),
    indentationWarning(file.lines, start, end, replacement),
  ];
  return {
    ...result,
    diff: editDiff(file.lines, start, end, replacement),
    warnings: [...own.filter(isText), ...result.warnings],
  };
}

/** Errors shown in a rejection, nearest the edit first (the gate sorts them); the rest are counted. */
const shownErrors = 5;

function errorLines(errors: readonly SyntaxProblem[]): string[] {
  const lines = errors
    .slice(0, shownErrors)
    .map((error) => `- ${error.line}:${error.column}: ${error.message}`);
  const more = errors.length - shownErrors;
  if (more > 0) lines.push(`- (${more} more, further from your edit)`);
  return lines;
}

/** The rejection text of SWE-agent, with the new errors, the edit as it would have looked and the original. */
export function rejectionMessage(options: {
  path: string;
  errors: SyntaxProblem[];
  original: TextFile;
  proposed: TextFile;
  start: number;
  end: number;
  newLineCount: number;
}): string {
  const { path, start } = options;
  const context = 5;
  const proposedWindow = renderWindow(
    path,
    options.proposed.lines,
    Math.max(1, start - context),
    options.newLineCount + 2 * context,
  );
  const originalCount = Math.max(0, options.end - start + 1);
  const originalWindow = renderWindow(
    path,
    options.original.lines,
    Math.max(1, start - context),
    originalCount + 2 * context,
  );
  return [
    "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.",
    "",
    "ERRORS:",
    ...errorLines(options.errors),
    "",
    "This is how your edit would have looked if applied",
    rule,
    proposedWindow,
    rule,
    "",
    "This is the original code before your edit",
    rule,
    originalWindow,
    rule,
    "Your changes have NOT been applied. Please fix your edit command and try again.",
    "You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.",
    "DO NOT re-run the same failed edit command. Running it again will lead to the same error.",
  ].join("\n");
}

/** Said after an edit of a file whose language has no checker. */
function uncheckedNote(path: string): string {
  return `(No syntax check is available for the language of ${path}; the edit was written without one.)`;
}
