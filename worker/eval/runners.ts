/**
 * Test runners by their test ids, for instances without a `test_command` and for `agent-fix mine`:
 * how to run given ids (a `{tests}` template, as instances carry it), how to run whole test files
 * reporting each test, and how to read that report. The runner is chosen from what repository
 * detection (worker/config/detect) found. Ids are what each runner takes back on its command line:
 * pytest node ids, unittest dotted names, Go and Rust test names, JavaScript test files.
 */
import type { DetectedPart } from "../config/detect/ecosystem-rule.js";
import { recordOutcome, type TestOutcome, type TestOutcomes } from "../test-results/test-outcome.js";
import {
  parseCargoTest,
  parseGoTest,
  parsePytestSummary,
  parseUnittestVerbose,
} from "../test-results/test-output.js";
import { shellWord } from "./grade.js";

export type RunnerKind = "pytest" | "unittest" | "go" | "cargo" | "jest" | "vitest" | "npm";

export interface TestRunner {
  kind: RunnerKind;
  /** Runs the ids put in place of `{tests}`. */
  template: string;
  /** Runs the given test files (paths from the repository root) and reports every test in them. */
  reportCommand(files: readonly string[]): string;
  /** Each test of the report and how it ended (skipped tests are left out). */
  parse(output: string): TestOutcomes;
}

/** The venv detection's setup makes, else the image's python3. */
const PYTHON = `"$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)"`;
const words = (items: readonly string[]) => items.map(shellWord).join(" ");

/** Top-level Go tests by name (the ids `go test -run` takes back), from `-v`'s lines. */
function parseGo(output: string): TestOutcomes {
  const results: TestOutcomes = new Map();
  for (const test of parseGoTest(output).tests) recordOutcome(results, test.name, test.outcome);
  return results;
}

/** libtest's test names, as `cargo test -- --exact` takes them back. */
const parseCargo = (output: string) => parseCargoTest(output, { qualified: false });

const MARK = "agent-fix-test-file";

/** JavaScript runners are asked file by file: a file is one id, passed when its run exits 0. */
function perFile(template: string): Pick<TestRunner, "reportCommand" | "parse"> {
  return {
    reportCommand: (files) =>
      files
        .map((file) => {
          const run = template.replaceAll("{tests}", shellWord(file));
          return `if ${run} >/dev/null 2>&1; then echo "${MARK} passed ${file}"; else echo "${MARK} failed ${file}"; fi`;
        })
        .join("; "),
    parse: (output) => {
      const results: TestOutcomes = new Map();
      for (const [, verdict, file = ""] of output.matchAll(
        new RegExp(`^${MARK} (passed|failed) (.+)$`, "gm"),
      )) {
        results.set(file, verdict as TestOutcome);
      }
      return results;
    },
  };
}

/** The directories of the files, as Go packages. */
const goPackages = (files: readonly string[]) => [
  ...new Set(files.map((file) => (file.includes("/") ? `./${file.slice(0, file.lastIndexOf("/"))}` : "."))),
];

/** The environment prefix of detection's command (module caches in the workspace), if any. */
const envPrefix = (test: string, command: string) => test.slice(0, Math.max(0, test.indexOf(command)));

function pythonRunner(part: DetectedPart): TestRunner {
  if (part.evidence.includes("pytest")) {
    const pytest = `${PYTHON} -m pytest -p no:cacheprovider`;
    return {
      kind: "pytest",
      template: `${pytest} {tests}`,
      reportCommand: (files) => `${pytest} -rA ${words(files)}`,
      parse: parsePytestSummary,
    };
  }
  // A module path from a file path: tests/test_ops.py -> tests.test_ops.
  const modules = (files: readonly string[]) =>
    files.map((file) => file.replace(/\.py$/, "").replaceAll("/", "."));
  return {
    kind: "unittest",
    template: `${PYTHON} -m unittest {tests}`,
    reportCommand: (files) => `${PYTHON} -m unittest -v ${words(modules(files))}`,
    parse: parseUnittestVerbose,
  };
}

function nodeRunner(script: string): TestRunner {
  if (/\bvitest\b/.test(script))
    return { kind: "vitest", template: "npx vitest run {tests}", ...perFile("npx vitest run {tests}") };
  if (/\bjest\b/.test(script))
    return { kind: "jest", template: "npx jest {tests}", ...perFile("npx jest {tests}") };
  return { kind: "npm", template: "npm test -- {tests}", ...perFile("npm test -- {tests}") };
}

/**
 * The runner of a detected part at the repository root; null for ecosystems whose test ids agent-fix
 * does not know (Ruby, the JVM, make). `nodeTestScript`: package.json's `test` script, for Node.
 */
export function runnerFor(part: DetectedPart, nodeTestScript = ""): TestRunner | null {
  switch (part.ecosystem) {
    case "python":
      return pythonRunner(part);
    case "go": {
      const go = `${envPrefix(part.test, "go test")}go test`;
      return {
        kind: "go",
        // The ids joined into one -run pattern: ^(TestA|TestB)$.
        template: `${go} ./... -run "^($(printf '%s|' {tests} | sed 's/|$//'))$"`,
        reportCommand: (files) => `${go} -v ${words(goPackages(files))}`,
        parse: parseGo,
      };
    }
    case "rust": {
      const cargo = `${envPrefix(part.test, "cargo test")}cargo test --offline`;
      return {
        kind: "cargo",
        template: `${cargo} -- --exact {tests}`,
        // Test files do not map to test targets: every test runs, each one reported.
        reportCommand: () => `${cargo} --no-fail-fast`,
        parse: parseCargo,
      };
    }
    case "node":
      return nodeRunner(nodeTestScript);
    default:
      return null;
  }
}
