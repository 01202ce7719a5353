/**
 * The command the model's change is judged by, for the instance prompt. The pipeline's gate runs the
 * repository's configured command; without one (a CLI run without --test), a guess from the files at the
 * repository root tells the model where to start instead of leaving it to guess (issue 12).
 */
import type { Environment } from "../../src/contracts.js";

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
