/**
 * Every edit of both bundles goes through here: the file as it would be is checked by the syntax gate
 * on the host, and only an edit that introduces no new syntax error is written back.
 */
import type { Sandbox } from "../../src/contracts.js";
import { checkEdit, type EditSpan } from "./lint/gate.js";
import type { SyntaxProblem } from "./lint/syntax-errors.js";
import { newUndefinedNamesWarning } from "./lint/undefined-names.js";
import { replaceLines, serializeTextFile, type TextFile, textOf } from "./text-file.js";
import { renderWindow } from "./viewer.js";

type GatedWrite =
  | { written: true; file: TextFile; checked: boolean; undefinedNames: string | null }
  | { written: false; errors: SyntaxProblem[]; proposed: TextFile };

const rule = "-------------------------------------------------";

/** Writes `proposed` over `file` only when the gate finds no new error in the changed span. */
export async function gatedWrite(options: {
  sandbox: Sandbox;
  absolute: string;
  /** The path the syntax checker is chosen by. */
  relative: string;
  file: TextFile;
  proposed: TextFile;
  span: EditSpan;
  lint: boolean;
}): Promise<GatedWrite> {
  const { file, proposed } = options;
  let checked = false;
  if (options.lint) {
    const verdict = await checkEdit(options.relative, textOf(file), textOf(proposed), options.span);
    if (verdict.checked && verdict.newErrors.length > 0)
      return { written: false, errors: verdict.newErrors, proposed };
    checked = verdict.checked;
  }
  await options.sandbox.writeFile(options.absolute, serializeTextFile(proposed));
  // Beyond syntax: names the edit left undefined, a warning only (the edit is written either way).
  const undefinedNames = options.lint
    ? await newUndefinedNamesWarning(options.relative, textOf(file), textOf(proposed)).catch(() => null)
    : null;
  return { written: true, file: proposed, checked, undefinedNames };
}

/** Replaces lines start..end of `file` with `replacement`, writing only when the gate lets it pass. */
export function gatedReplace(options: {
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
  return gatedWrite({
    ...options,
    proposed: replaceLines(file, start, end, replacement),
    span: { start, end, newLineCount: replacement.length },
  });
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
    ...options.errors.map((error) => `- ${error.line}:${error.column}: ${error.message}`),
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
export function uncheckedNote(path: string): string {
  return `(No syntax check is available for the language of ${path}; the edit was written without one.)`;
}
