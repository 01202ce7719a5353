/**
 * Per-test results of the repository's own test command (the run's baseline to prove steps), taken
 * without rewriting it, through what each runner reads from its environment or prints anyway:
 *
 * - pytest writes JUnit XML through `PYTEST_ADDOPTS=--junitxml=…` (also inside `npm test` or `make test`);
 * - vitest and jest write their JSON report through a file Node preloads (node-report-preload.ts);
 * - Maven Surefire and Gradle write JUnit XML anyway (`target/surefire-reports`, `build/test-results`):
 *   those written during this run are read;
 * - `go test` (its package lines and `--- FAIL:` lines), cargo's libtest lines and TAP (node:test) are
 *   read from the output the model sees, unchanged.
 *
 * Not `go test -json` through GOFLAGS: GOFLAGS reaches every go command that knows the flag, so a
 * Makefile's `go list` or `go vet` would print JSON too; the default output's package lines suffice (a
 * passing package stands for its tests, which it does not list without -v). Not node:test's reporters
 * through NODE_OPTIONS: its default output off a terminal is TAP on the images' Node 18 and 20. pytest
 * run twice in one command (tox-like scripts) keeps the last run's report only: the first run's tests
 * are not judged one by one, and a command that failed on the unchanged code too would not show their
 * failure (a known gap, as is any test runner that reports nothing beside one that does).
 *
 * The reports go to a directory under the workspace's `.git`, which no change includes (the export skips
 * every `.git`) and the tests do not see as a change. They are written by the tests, that is by the code
 * under test: each file is read bounded in size and count, parsed as untrusted, and one that cannot be
 * read is said, never trusted. Nothing here reaches the sandbox but paths: no credential.
 */
import { posix } from "node:path";
import type { Sandbox } from "../../../src/shared/contracts.js";
import { parseJestJson } from "../../test-results/jest-json.js";
import { parseJunitXml, UnreadableReport } from "../../test-results/junit-xml.js";
import type { TestOutcomes, TestResults } from "../../test-results/test-outcome.js";
import {
  goTestOutcomes,
  parseCargoTest,
  parseTap,
  parseUnittestVerbose,
} from "../../test-results/test-output.js";
import { NODE_REPORT_PRELOAD } from "./node-report-preload.js";

/** Under the workspace's .git: never part of a change, never shown by `git status`. */
const REPORT_DIR = ".git/agent-fix-reports";
const STARTED = `${REPORT_DIR}/.started`;
const PRELOAD = `${REPORT_DIR}/preload.cjs`;

/** Report files read per run: a Surefire report is one file per test class. */
const MAX_REPORT_FILES = 400;
/** One report's size, and all of a run's together. */
const MAX_REPORT_BYTES = 8 * 1024 * 1024;
const MAX_REPORTS_TOTAL_BYTES = 32 * 1024 * 1024;

/** The environment the test command gets, its report directory made (and emptied) first. */
export async function prepareTestReports(
  sandbox: Sandbox,
  signal?: AbortSignal,
): Promise<Record<string, string>> {
  const dir = posix.join(sandbox.workdir, REPORT_DIR);
  const made = await sandbox.exec(`rm -rf ${REPORT_DIR} && mkdir -p ${REPORT_DIR} && touch ${STARTED}`, {
    cwd: sandbox.workdir,
    timeoutMs: 30_000,
    ...(signal ? { signal } : {}),
  });
  if (made.exitCode !== 0) return {};
  await sandbox.writeFile(PRELOAD, NODE_REPORT_PRELOAD);
  return {
    PYTEST_ADDOPTS: `--junitxml=${dir}/pytest.xml`,
    // Quoted: NODE_OPTIONS splits on spaces, and a local sandbox's directory may hold one.
    NODE_OPTIONS: `--require "${posix.join(sandbox.workdir, PRELOAD)}"`,
    AGENT_FIX_TEST_REPORTS: dir,
  };
}

/**
 * The report files of this run: the report directory's, and the JVM build tools' written since it
 * started (a kept environment may hold older ones). NUL-separated, at most MAX_REPORT_FILES + 1 (to know
 * there were more).
 */
function listCommand(): string {
  const ours = `find ${REPORT_DIR} -maxdepth 1 -type f \\( -name '*.xml' -o -name '*.json' \\) -print0`;
  const jvm =
    "if [ -e pom.xml ] || [ -e build.gradle ] || [ -e build.gradle.kts ]; then " +
    "find . \\( -name .git -o -name node_modules \\) -prune -o -type f " +
    "\\( -path '*/target/surefire-reports/TEST-*.xml' -o -path '*/target/failsafe-reports/TEST-*.xml' -o -path '*/build/test-results/*.xml' \\) " +
    `-newer ${STARTED} -print0; fi`;
  return `{ ${ours}; ${jvm}; } 2>/dev/null | head -z -n ${MAX_REPORT_FILES + 1}`;
}

/** What one report file holds, by its name: only the names agent-fix asked for, and the JVM tools' reports. */
function parseReport(path: string, text: string, root: string): { tests: TestOutcomes; source: string } {
  const name = posix.basename(path);
  if (path.startsWith(`${REPORT_DIR}/`)) {
    if (name.endsWith(".vitest.json"))
      return { tests: parseJestJson(text, root), source: "vitest's JSON report" };
    if (name.endsWith(".jest.json"))
      return { tests: parseJestJson(text, root), source: "jest's JSON report" };
    if (name === "pytest.xml") return { tests: parseJunitXml(text), source: "pytest's JUnit XML" };
    throw new UnreadableReport("it is not a report agent-fix asked for");
  }
  const tool =
    path.includes("/build/test-results/") || path.startsWith("build/") ? "Gradle" : "Maven Surefire";
  return { tests: parseJunitXml(text), source: `${tool}'s JUnit XML` };
}

/** The results read from the output text; each parser reads only its runner's anchored lines. */
const OUTPUT_PARSERS: readonly { source: string; parse: (output: string) => TestOutcomes }[] = [
  { source: "go test's output", parse: goTestOutcomes },
  { source: "cargo test's output", parse: (output) => parseCargoTest(output) },
  { source: "TAP output", parse: parseTap },
  { source: "unittest's verbose output", parse: parseUnittestVerbose },
];

/** The results a test run produced; null when no runner reported a test (the exit code decides). */
export async function collectTestResults(
  sandbox: Sandbox,
  output: string,
  signal?: AbortSignal,
): Promise<TestResults | null> {
  const tests: TestOutcomes = new Map();
  const sources: string[] = [];
  const problems: string[] = [];
  const add = (found: TestOutcomes, source: string, prefix: string) => {
    if (found.size === 0) return;
    for (const [id, outcome] of found) tests.set(`${prefix}${id}`, outcome);
    if (!sources.includes(source)) sources.push(source);
  };
  const listed = await sandbox.exec(listCommand(), {
    cwd: sandbox.workdir,
    timeoutMs: 60_000,
    ...(signal ? { signal } : {}),
  });
  const paths = listed.output
    .split("\0")
    .map((path) => path.replace(/^\.\//, ""))
    .filter((path) => path !== "" && !path.includes("\n"))
    .sort();
  if (paths.length > MAX_REPORT_FILES) {
    problems.push(`more than ${MAX_REPORT_FILES} report files: only the first ${MAX_REPORT_FILES} were read`);
    paths.length = MAX_REPORT_FILES;
  }
  let total = 0;
  for (const path of paths) {
    if (total >= MAX_REPORTS_TOTAL_BYTES) {
      problems.push(
        `the reports passed ${MAX_REPORTS_TOTAL_BYTES / 1024 / 1024} MB together: ${path} and later ones were not read`,
      );
      break;
    }
    try {
      const data = await sandbox.readFile(path, {
        maxBytes: Math.min(MAX_REPORT_BYTES, MAX_REPORTS_TOTAL_BYTES - total),
      });
      total += data.length;
      const report = parseReport(path, data.toString("utf8"), sandbox.workdir);
      // Reports of one kind share ids (a Surefire report per class); a JVM module's path keeps modules apart.
      const module = path.startsWith(REPORT_DIR)
        ? ""
        : path.slice(0, path.search(/(?:^|\/)(?:target|build)\//));
      add(report.tests, report.source, module ? `${module}: ` : "");
    } catch (error) {
      signal?.throwIfAborted();
      const reason = error instanceof Error ? error.message : String(error);
      problems.push(`${path} was not read: ${reason}`);
    }
  }
  for (const parser of OUTPUT_PARSERS) add(parser.parse(output), parser.source, "");
  return tests.size === 0 ? null : { tests, sources, problems };
}
