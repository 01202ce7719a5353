/**
 * What a failing test run looks like from its output: the environment the tests ran in (a toolchain that
 * crashed at start-up, a command or a module that is not installed, a network the sandbox does not have, a
 * service that is not running), a timeout, or real failing tests. The status names it with a hint that
 * fits (the run's baseline and gate steps): "fix the tests" is the wrong advice for tests that never
 * ran. A guess from the text, so it names the line it rests on; the patterns are the messages the tools
 * print (test/fixtures/test-outputs/ holds real ones), anchored where the tools anchor them, so a test
 * that merely mentions "not found" in an assertion stays a test failure.
 */
import type { EnvironmentCause, TestFailureClass } from "../../../src/shared/github/baseline-failure.js";

/** A pattern of one cause; group 1, when there, names what is missing. */
interface Sign {
  cause: EnvironmentCause;
  pattern: RegExp;
}

/**
 * In the order a cause explains the others: a toolchain that crashes also fails to import; a missing
 * module can follow from an offline install; a failed fetch explains a failing test that needed it.
 */
const SIGNS: readonly Sign[] = [
  // Node older than the tools: an ESM import of a builtin's newer export, or of a newer builtin.
  { cause: "toolchain", pattern: /The requested module '(node:[\w/]+)' does not provide an export named/ },
  { cause: "toolchain", pattern: /\bERR_UNKNOWN_BUILTIN_MODULE\b|No such built-in module: (node:[\w/]+)/ },
  { cause: "toolchain", pattern: /\bERR_REQUIRE_ESM\b/ },
  // Go, Python and Node saying which version they need.
  { cause: "toolchain", pattern: /go\.mod requires go >= ([\w.]+)/ },
  { cause: "toolchain", pattern: /requires a different Python|Requires-Python/ },
  { cause: "toolchain", pattern: /Unsupported engine|The engine "node" is incompatible/ },
  // bash ("bash: line 1: pytest: command not found"), dash ("sh: 1: jest: not found"), env and npx.
  {
    cause: "command",
    pattern: /^(?:\S*(?:sh|bash)(?:: line \d+)?: (?:\d+: )?)([\w.+@/-]+): (?:command )?not found\s*$/m,
  },
  { cause: "command", pattern: /^\/usr\/bin\/env: '([\w.+@/-]+)': No such file or directory\s*$/m },
  { cause: "command", pattern: /^(?:bash|sh): ([\w.+@/-]+): No such file or directory\s*$/m },
  // Python, Node (CommonJS and ESM) and Go.
  { cause: "module", pattern: /ModuleNotFoundError: No module named '([\w.]+)'/ },
  { cause: "module", pattern: /ImportError: No module named ([\w.]+)/ },
  { cause: "module", pattern: /Cannot find (?:module|package) '([\w.@/-]+)'/ },
  { cause: "module", pattern: /no required module provides package ([\w.@/-]+)/ },
  // Names that do not resolve and networks that are not there (curl, npm/Node, Python, Go).
  { cause: "network", pattern: /Could not resolve host:? ([\w.-]+)/ },
  { cause: "network", pattern: /getaddrinfo (?:ENOTFOUND|EAI_AGAIN) ([\w.-]+)/ },
  { cause: "network", pattern: /\b(?:ENOTFOUND|EAI_AGAIN)\b/ },
  { cause: "network", pattern: /Temporary failure in name resolution|Name or service not known/ },
  { cause: "network", pattern: /dial tcp: lookup ([\w.-]+)|network is unreachable|ENETUNREACH/ },
  { cause: "service", pattern: /\bECONNREFUSED\b|Connection refused/ },
];

/** Exit statuses a shell gives a command it could not run at all. */
const COMMAND_NOT_FOUND = 127;

/** Colour and cursor codes a tool may print even without a terminal. */
const ANSI_ESCAPE = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** A line of output short enough to quote. */
const EVIDENCE_CHARS = 300;

/** The line around `index` in `output`, trimmed and bounded. */
function lineAt(output: string, index: number): string {
  const start = output.lastIndexOf("\n", index) + 1;
  const end = output.indexOf("\n", index);
  const line = output.slice(start, end === -1 ? undefined : end).trim();
  return line.length > EVIDENCE_CHARS ? `${line.slice(0, EVIDENCE_CHARS - 1)}…` : line;
}

/** What a test run that did not pass looks like; `tests` when nothing points elsewhere. */
export function classifyTestFailure(run: {
  exitCode: number;
  timedOut: boolean;
  output: string;
}): TestFailureClass {
  if (run.timedOut) return { kind: "timeout" };
  const output = run.output.replace(ANSI_ESCAPE, "");
  for (const sign of SIGNS) {
    const match = sign.pattern.exec(output);
    if (match) {
      return {
        kind: "environment",
        cause: sign.cause,
        evidence: lineAt(output, match.index),
        subject: match[1] ?? null,
      };
    }
  }
  if (run.exitCode === COMMAND_NOT_FOUND) {
    const last = output.trimEnd().split("\n").at(-1)?.trim() ?? "";
    return { kind: "environment", cause: "command", evidence: last, subject: null };
  }
  return { kind: "tests" };
}
