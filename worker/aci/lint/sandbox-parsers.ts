/**
 * Python's own parser, run where the language lives: in the sandbox, whose python3 is the one the
 * repository's tests run with (the worker host may have none, or another version). The file is
 * compiled where it is (one small command in the agent's shell; the text never goes through the
 * command line, which the shell reads a byte at a time): the old text as it is on disk, then the new
 * text written in its place, and the old bytes written back when Python rejects it. A file Python
 * rejected already (newer syntax, Python 2) is left to tree-sitter; so is every file when the sandbox
 * has no python3 (the agent may have changed PATH: asked again on the next edit) or the answer is
 * malformed (what runs in the sandbox is the agent's to break, so nothing here trusts it).
 */
import { createHash } from "node:crypto";
import type { Sandbox } from "../../../src/shared/contracts.js";
import type { SyntaxProblem } from "./syntax-errors.js";

const marker = "AGENT_FIX_PARSE ";
const timeoutMs = 20_000;

/**
 * Compiles the file named by argv[1] and prints one marked line: `ok`, or the error's kind, line,
 * column and message. Nothing is imported (sys is built in): start-up is most of the cost.
 */
const pythonScript = [
  "import sys",
  "try:",
  '    with open(sys.argv[1], "rb") as source:',
  '        compile(source.read(), sys.argv[1], "exec", dont_inherit=True)',
  '    out = "ok"',
  "except SyntaxError as error:",
  '    out = "%s %d %d %s" % (type(error).__name__, error.lineno or 1, error.offset or 1, error.msg)',
  "except (ValueError, MemoryError, RecursionError) as error:",
  '    out = "%s 1 1 %s" % (type(error).__name__, error)',
  `print("\\n${marker}" + out.replace("\\n", " "))`,
].join("\n");

/** Verdicts per sandbox (its python3 decides): the text before an edit is usually the last one after. */
const verdicts = new WeakMap<Sandbox, Map<string, SyntaxProblem[]>>();
const maxVerdicts = 32;

const digest = (text: string) => createHash("sha256").update(text).digest("base64");

function problemsOf(answer: string): SyntaxProblem[] | null {
  if (answer === "ok") return [];
  const match = /^(\w+) (\d+) (-?\d+) (.*)$/.exec(answer);
  if (!match) return null;
  const [, kind, line, column, message] = match;
  const at = { line: Math.max(1, Number(line)), column: Math.max(1, Number(column)) };
  return [{ ...at, kind: "python", message: `${kind}: ${message}` }];
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Python's verdict on the file at `absolute` as it is now, or null when python3 gave none. */
async function compileInSandbox(sandbox: Sandbox, absolute: string): Promise<SyntaxProblem[] | null> {
  // A subshell and `|| true`: the agent's `set -e` or a missing python3 must not end its shell.
  const command = `(command python3 -I -S -c ${shellQuote(pythonScript)} ${shellQuote(absolute)}) 2>&1 || true`;
  const result = await sandbox.exec(command, { timeoutMs });
  const line = result.output.split("\n").find((candidate) => candidate.startsWith(marker));
  return line ? problemsOf(line.slice(marker.length).trimEnd()) : null;
}

async function exists(sandbox: Sandbox, absolute: string): Promise<boolean> {
  try {
    await sandbox.readFile(absolute, { maxBytes: 1 });
    return true;
  } catch {
    // A file that cannot be read (absent, a directory, outside the workspace) counts as not there.
    return false;
  }
}

function remember(known: Map<string, SyntaxProblem[]>, key: string, problems: SyntaxProblem[]): void {
  if (known.size >= maxVerdicts) known.delete(known.keys().next().value!);
  known.set(key, problems);
}

/**
 * Writes `after` over `absolute` (which holds `before`) when Python accepts it, and returns Python's
 * errors of `after` (at most one: Python stops at the first); the file keeps `before` when there are
 * any. Null: Python cannot decide (no python3, or it rejected `before` too), and the file holds
 * `before`.
 */
export async function pythonCheckedWrite(options: {
  sandbox: Sandbox;
  absolute: string;
  before: { text: string; data: Buffer };
  after: { text: string; data: Buffer };
}): Promise<SyntaxProblem[] | null> {
  const { sandbox, absolute, before, after } = options;
  const known = verdicts.get(sandbox) ?? new Map<string, SyntaxProblem[]>();
  verdicts.set(sandbox, known);
  const beforeKey = digest(before.text);
  // An empty text is valid Python; a file about to be created is removed again when rejected.
  const created = before.data.length === 0 && !(await exists(sandbox, absolute));
  if (before.text === "") known.set(beforeKey, []);
  if (!known.has(beforeKey)) {
    const problems = await compileInSandbox(sandbox, absolute);
    if (!problems) return null;
    remember(known, beforeKey, problems);
  }
  if (known.get(beforeKey)!.length > 0) return null;
  const afterKey = digest(after.text);
  const cached = known.get(afterKey);
  if (cached) {
    if (cached.length === 0) await sandbox.writeFile(absolute, after.data);
    return cached;
  }
  await sandbox.writeFile(absolute, after.data);
  const problems = await compileInSandbox(sandbox, absolute);
  if (!problems || problems.length > 0) {
    if (created) await sandbox.exec(`rm -f -- ${shellQuote(absolute)}`, { timeoutMs });
    else await sandbox.writeFile(absolute, before.data);
  }
  if (problems) remember(known, afterKey, problems);
  return problems;
}
