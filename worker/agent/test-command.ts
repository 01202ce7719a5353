/**
 * The command the model's change is judged by, for the instance prompt. The pipeline's gate runs the
 * repository's configured command; without one (a CLI run without --test), a guess from the files at the
 * repository root tells the model where to start instead of leaving it to guess (issue 12).
 */
import type { Environment } from "../../src/shared/contracts.js";

/** Shell code run at the repository root that prints the likely test command, or nothing. */
const detectScript = [
  `if [ -f package.json ] && grep -q '"test"[[:space:]]*:' package.json; then echo 'npm test'`,
  "elif [ -f Cargo.toml ]; then echo 'cargo test'",
  "elif [ -f go.mod ]; then echo 'go test ./...'",
  "elif [ -f Makefile ] && grep -q '^test:' Makefile; then echo 'make test'",
  "elif [ -f pytest.ini ] || [ -f conftest.py ] || grep -qs '^\\[tool.pytest' pyproject.toml || grep -qs '^\\[tool:pytest\\]' setup.cfg tox.ini; then echo 'python3 -m pytest'",
  "elif [ -d tests ] && [ -d src ]; then echo 'PYTHONPATH=src python3 -m unittest discover -s tests -t .'",
  "elif [ -d tests ]; then echo 'python3 -m unittest discover -s tests -t .'",
  "fi",
].join("; ");

/** The likely test command of the repository in `env`, or null when nothing says how to run its tests. */
export async function detectTestCommand(env: Environment, signal?: AbortSignal): Promise<string | null> {
  // A detection that fails finds nothing: null, and the caller says no test command is known.
  const result = await env.execute("bash", { command: `( ${detectScript} )` }, signal).catch(() => null);
  const first = result?.observation.split("\n")[0]?.trim() ?? "";
  const known = [
    "npm test",
    "cargo test",
    "go test ./...",
    "make test",
    "python3 -m pytest",
    "PYTHONPATH=src python3 -m unittest discover -s tests -t .",
    "python3 -m unittest discover -s tests -t .",
  ];
  return known.includes(first) ? first : null;
}

export type TestCommandSource = { command: string; from: "config" | "repository" } | null;

/** The sentence of the instance prompt that says how the change will be checked. */
export function testCommandNote(source: TestCommandSource): string {
  if (source === null) {
    return "No test command is configured: find how the repository runs its tests (README, CI files) and run the relevant ones before you submit.";
  }
  if (source.from === "config") {
    return `Your change will be checked with: \`${source.command}\` (run from the repository root). Run it yourself before you submit.`;
  }
  return `No test command is configured; the repository's files suggest \`${source.command}\` (run from the repository root). Run the relevant tests before you submit.`;
}

/**
 * The system prompt's first tip, how to reproduce the bug, in the repository's language as its test
 * command tells it (issue 24: Go and Node repositories were told to write reproduce.py). Unknown: a
 * language-neutral tip. Indented to continue the numbered tip of the template.
 */
export function reproduceTip(source: TestCommandSource): string {
  const command = source?.command ?? "";
  const intro =
    "1. Reproduce the bug first: write a short script or test that shows it, run it, and run it again\n   after your fix to confirm.";
  const remove =
    "Remove such scripts before you submit (a regression test that belongs\n   in the test suite stays).";
  if (/python3|pytest|unittest/.test(command)) {
    return `${intro} Put scratch scripts at the repository root (e.g. reproduce.py) and run them from\n   there (python3 reproduce.py): imports then resolve as from the repository root, so import the\n   package as its tests do (for a src/ layout: PYTHONPATH=src python3 reproduce.py). ${remove}`;
  }
  if (command.startsWith("go test")) {
    return `${intro} In Go, write it as a test in the package's directory (e.g. reproduce_test.go with\n   func TestReproduce) and run it with go test -run TestReproduce ./path/to/package/. ${remove}`;
  }
  if (command.startsWith("cargo")) {
    return `${intro} In Rust, write it as a test (e.g. tests/reproduce.rs) and run it with\n   cargo test --test reproduce. ${remove}`;
  }
  if (command.startsWith("npm")) {
    return `${intro} In Node, put a scratch script at the repository root (e.g. reproduce.mjs, importing\n   the package as its tests do) and run it with node reproduce.mjs. ${remove}`;
  }
  const known = command === "" ? "" : ` Run it the way the repository's tests run (${command}).`;
  return `${intro} Write it in the repository's language and put it at the repository root.${known}\n   ${remove}`;
}
