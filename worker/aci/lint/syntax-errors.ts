/** Finds the syntax errors of a text: tree-sitter ERROR and MISSING nodes, JSON.parse, the yaml parser. */
import { parseAllDocuments } from "yaml";
import type { Checker } from "./languages.js";
import { parseCached } from "./tree-cache.js";

export interface SyntaxProblem {
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  /** Last line the problem covers (an error node can span many), when it is not `line`. */
  endLine?: number | undefined;
  /** Stable kind used to match an error before and after an edit. */
  kind: string;
  message: string;
}

/** Errors past this many are not listed: one broken file can yield thousands of nodes. */
const maxProblems = 200;

function snippet(text: string): string {
  const firstLine = text.split("\n")[0]!.trim();
  return firstLine.length > 40 ? `${firstLine.slice(0, 40)}...` : firstLine;
}

/** Names a bracket opened but not closed (or closed but not opened) in the text of an error. */
function bracketHint(text: string): string {
  for (const [open, close] of [
    ["(", ")"],
    ["[", "]"],
    ["{", "}"],
  ] as const) {
    const opened = text.split(open).length - 1;
    const closed = text.split(close).length - 1;
    if (opened > closed) return ` (a \`${open}\` is not closed)`;
    if (closed > opened) return ` (a \`${close}\` has no matching \`${open}\`)`;
  }
  return "";
}

interface ErrorNode {
  type: string;
  endPosition: { row: number; column: number };
  isError: boolean;
  isMissing: boolean;
  hasError: boolean;
  text: string;
  startPosition: { row: number; column: number };
  children: (ErrorNode | null)[];
}

function collectTreeErrors(node: ErrorNode, out: SyntaxProblem[]): void {
  if (out.length >= maxProblems) return;
  const at = {
    line: node.startPosition.row + 1,
    column: node.startPosition.column + 1,
    endLine: node.endPosition.row + 1,
  };
  if (node.isMissing) {
    out.push({ ...at, kind: `missing ${node.type}`, message: `missing \`${node.type}\`` });
    return;
  }
  if (node.isError) {
    // Error recovery can wrap a whole function (or file) in one ERROR node; the errors nested in it
    // are where the parser really stopped, so they are reported instead of the wrapper's first line.
    const found = out.length;
    if (node.endPosition.row > node.startPosition.row)
      for (const child of node.children) if (child?.hasError) collectTreeErrors(child, out);
    if (out.length > found) return;
    const near = snippet(node.text);
    const message = near ? `unexpected \`${near}\`${bracketHint(node.text)}` : "syntax error";
    out.push({ ...at, kind: "error", message });
    return;
  }
  if (!node.hasError) return;
  const found = out.length;
  for (const child of node.children) if (child) collectTreeErrors(child, out);
  // Some grammars hide the MISSING token inside a node (C#: an identifier): blame that node.
  if (out.length === found)
    out.push({ ...at, kind: `incomplete ${node.type}`, message: `incomplete \`${node.type}\`` });
}

function positionToLineColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  return { line, column: position - (before.lastIndexOf("\n") + 1) + 1 };
}

function jsonErrors(text: string): SyntaxProblem[] {
  try {
    JSON.parse(text);
    return [];
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const at = position
      ? positionToLineColumn(text, Number(position[1]))
      : positionToLineColumn(text, text.trimEnd().length);
    return [{ ...at, kind: "json", message: message.replace(/ in JSON at position \d+.*$/, "") }];
  }
}

function yamlErrors(text: string): SyntaxProblem[] {
  const problems: SyntaxProblem[] = [];
  for (const document of parseAllDocuments(text)) {
    for (const error of document.errors) {
      const at = error.linePos?.[0] ?? { line: 1, col: 1 };
      const message = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
      problems.push({ line: at.line, column: at.col, kind: error.code, message });
    }
  }
  return problems;
}

/** The errors of `text`; `base` is a text whose tree may be cached, to parse `text` incrementally from it. */
export async function syntaxErrors(checker: Checker, text: string, base?: string): Promise<SyntaxProblem[]> {
  if (checker.kind === "json") return text.trim() === "" ? [] : jsonErrors(text);
  if (checker.kind === "yaml") return yamlErrors(text);
  const tree = await parseCached(checker.grammar, text, base);
  const problems: SyntaxProblem[] = [];
  collectTreeErrors(tree.rootNode as unknown as ErrorNode, problems);
  return problems;
}
