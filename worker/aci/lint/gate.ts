/**
 * The syntax gate: an edit is rejected only for errors it introduces. Errors of the file before the
 * edit are mapped through the edit (lines below it shift, lines inside it are dropped) and every error
 * of the file after the edit that is not among them is new. As SWE-agent does, errors above the edit
 * in a file that was already broken are not blamed on the edit (error recovery can move them).
 */
import { type Checker, checkerLabel, checkersFor } from "./languages.js";
import { type SyntaxProblem, syntaxErrors } from "./syntax-errors.js";

export interface EditSpan {
  /** First replaced line (1-based) in the file before the edit. */
  start: number;
  /** Last replaced line (inclusive); start - 1 for a pure insertion. */
  end: number;
  /** Number of lines that replace them. */
  newLineCount: number;
}

type GateVerdict = { checked: false } | { checked: true; language: string; newErrors: SyntaxProblem[] };

const cache = new Map<string, { text: string; problems: SyntaxProblem[] }>();
const cacheSize = 16;

async function cachedErrors(checker: Checker, text: string, base?: string): Promise<SyntaxProblem[]> {
  const id = checkerLabel(checker) + text.length;
  const hit = cache.get(id);
  if (hit && hit.text === text) return hit.problems;
  const problems = await syntaxErrors(checker, text, base);
  if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
  cache.set(id, { text, problems });
  return problems;
}

/**
 * Parses a file the agent just opened while the model thinks, so the first edit of a large file is
 * parsed incrementally. Failures are ignored here; the edit itself reports them.
 */
export function prewarm(filePath: string, text: string): void {
  const [checker] = checkersFor(filePath);
  if (checker?.kind !== "tree-sitter") return;
  setImmediate(() => {
    // Only a warm-up: the check the edit runs later reports the same error.
    cachedErrors(checker, text).catch(() => undefined);
  });
}

function key(problem: SyntaxProblem, line = problem.line): string {
  return `${line}:${problem.column}:${problem.kind}`;
}

function newProblems(before: SyntaxProblem[], after: SyntaxProblem[], span: EditSpan): SyntaxProblem[] {
  const shift = span.newLineCount - (span.end - span.start + 1);
  const known = new Map<string, number>();
  for (const problem of before) {
    if (problem.line >= span.start && problem.line <= span.end) continue;
    const line = problem.line > span.end ? problem.line + shift : problem.line;
    const mapped = key(problem, line);
    known.set(mapped, (known.get(mapped) ?? 0) + 1);
  }
  const fresh: SyntaxProblem[] = [];
  for (const problem of after) {
    const id = key(problem);
    const count = known.get(id) ?? 0;
    if (count > 0) {
      known.set(id, count - 1);
      continue;
    }
    if (before.length > 0 && problem.line < span.start) continue;
    fresh.push(problem);
  }
  return fresh;
}

/** Distance in lines from a problem to the edited lines (new numbering); 0 inside them. */
function distance(problem: SyntaxProblem, span: EditSpan): number {
  const first = span.start;
  const last = span.start + Math.max(span.newLineCount, 1) - 1;
  const top = problem.line;
  const bottom = Math.max(problem.endLine ?? problem.line, problem.line);
  if (bottom < first) return first - bottom;
  if (top > last) return top - last;
  return 0;
}

/** The problems nearest the edited lines first (then in file order): they are the edit's own. */
function nearestFirst(problems: readonly SyntaxProblem[], span: EditSpan): SyntaxProblem[] {
  return problems
    .map((problem, index) => ({ problem, index, away: distance(problem, span) }))
    .sort((a, b) => a.away - b.away || a.index - b.index)
    .map((entry) => entry.problem);
}

/** Checks an edit of `filePath` from `before` to `after` (LF text) on the host. */
export async function checkEdit(
  filePath: string,
  before: string,
  after: string,
  span: EditSpan,
): Promise<GateVerdict> {
  // A templated YAML or JSON file (Helm, Jinja) is not YAML or JSON until rendered.
  const templated = /\{\{|\{%/.test(before) || /\{\{|\{%/.test(after);
  const checkers = checkersFor(filePath).filter((checker) => checker.kind === "tree-sitter" || !templated);
  if (checkers.length === 0) return { checked: false };
  let first: GateVerdict | undefined;
  for (const checker of checkers) {
    const old = await cachedErrors(checker, before);
    const now = await cachedErrors(checker, after, before);
    const verdict: GateVerdict = {
      checked: true,
      language: checkerLabel(checker),
      newErrors: nearestFirst(newProblems(old, now, span), span),
    };
    if (verdict.newErrors.length === 0) return verdict;
    first ??= verdict;
  }
  return first!;
}
