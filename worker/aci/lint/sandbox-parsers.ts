/**
 * The language's own parser, run where the language lives: in the sandbox, whose python3 is the one the
 * repository's tests run with (the worker host may have none, or another version). One command in the
 * agent's shell per edit: the texts go in as base64 on a here-document (no file is written), and the
 * answer is one marked JSON line. A file whose old text this parser rejects too (newer syntax, Python
 * 2) is left to tree-sitter; so is every file when the sandbox has no python3 (the agent may have
 * changed PATH: asked again on the next edit) or the answer is malformed (what runs in the sandbox is
 * the agent's to break, so nothing here trusts it).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Sandbox } from "../../../src/contracts.js";
import type { SyntaxProblem } from "./syntax-errors.js";

const marker = "AGENT_FIX_PARSE ";
const timeoutMs = 20_000;

/** Compiles each text of stdin (base64 after a "t") and prints one marked JSON line of verdicts. */
const pythonScript = [
  "import sys, base64, json, warnings",
  'warnings.simplefilter("ignore")',
  "out = []",
  "for word in sys.stdin.read().split():",
  '    source = base64.b64decode(word[1:]).decode("utf-8")',
  "    try:",
  '        compile(source, "<edit>", "exec", dont_inherit=True)',
  "        out.append([])",
  "    except SyntaxError as error:",
  "        out.append([type(error).__name__, error.msg, error.lineno or 1, error.offset or 1])",
  "    except (ValueError, MemoryError, RecursionError) as error:",
  "        out.append([type(error).__name__, str(error), 1, 1])",
  `print("\\n${marker}" + json.dumps(out))`,
].join("\n");

/** Verdicts per sandbox (its python3 decides): the text before an edit is usually the last one after. */
const verdicts = new WeakMap<Sandbox, Map<string, SyntaxProblem[]>>();
const maxVerdicts = 32;

const digest = (text: string) => createHash("sha256").update(text).digest("base64");

function problemsOf(raw: unknown): SyntaxProblem[] | null {
  if (!Array.isArray(raw)) return null;
  if (raw.length === 0) return [];
  const [kind, message, line, column] = raw as unknown[];
  if (typeof kind !== "string" || typeof message !== "string") return null;
  if (!Number.isInteger(line) || !Number.isInteger(column)) return null;
  const at = { line: Math.max(1, line as number), column: Math.max(1, column as number) };
  return [{ ...at, kind: "python", message: `${kind}: ${message}` }];
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

async function runPython(sandbox: Sandbox, texts: readonly string[]): Promise<SyntaxProblem[][] | null> {
  const end = `AGENT_FIX_EOF_${randomBytes(6).toString("hex")}`;
  const words = texts.map((text) => `t${Buffer.from(text, "utf8").toString("base64")}`);
  // A subshell and `|| true`: the agent's `set -e` or a missing python3 must not end its shell.
  const command = `(command python3 -I -S -c ${shellQuote(pythonScript)} <<'${end}'\n${words.join("\n")}\n${end}\n) 2>&1 || true`;
  const result = await sandbox.exec(command, { timeoutMs });
  const line = result.output.split("\n").find((candidate) => candidate.startsWith(marker));
  if (!line) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.slice(marker.length));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== texts.length) return null;
  const problems = parsed.map(problemsOf);
  return problems.every((entry) => entry !== null) ? (problems as SyntaxProblem[][]) : null;
}

/**
 * Python's own errors (at most one: Python stops at the first) for `before` and `after`, or null when
 * the sandbox's python3 could not answer. Texts this sandbox has judged before are not sent again.
 */
export async function pythonErrors(
  sandbox: Sandbox,
  before: string,
  after: string,
): Promise<{ before: SyntaxProblem[]; after: SyntaxProblem[] } | null> {
  const known = verdicts.get(sandbox) ?? new Map<string, SyntaxProblem[]>();
  verdicts.set(sandbox, known);
  const [beforeKey, afterKey] = [digest(before), digest(after)];
  const missing = [
    ...new Map([
      [beforeKey, before],
      [afterKey, after],
    ]).entries(),
  ].filter(([key]) => !known.has(key));
  if (missing.length > 0) {
    const answers = await runPython(
      sandbox,
      missing.map(([, text]) => text),
    );
    if (!answers) return null;
    missing.forEach(([key], index) => {
      if (known.size >= maxVerdicts) known.delete(known.keys().next().value!);
      known.set(key, answers[index]!);
    });
  }
  return { before: known.get(beforeKey)!, after: known.get(afterKey)! };
}
