/**
 * The words a failing test run gets (the run's baseline, gate and end steps): the status's reason
 * when the tests fail before any change, with a hint that fits what the failure looks like
 * (test-failure-class.ts), and the gate's verdict the model reads, a timeout saying it was one, with
 * its limit and what the tests took on the unchanged code (test-time-limit.ts).
 */
import type { Gate } from "../../../src/shared/contracts.js";
import { failureClassWords, type TestFailureClass } from "../../../src/shared/github/baseline-failure.js";
import { testTail } from "../../../src/shared/github/left-work.js";
import type { PerTestVerdict } from "./per-test-verdict.js";
import { classifyTestFailure } from "./test-failure-class.js";
import type { TestRun } from "./test-run.js";
import { BASELINE_FACTOR, type TestTimeLimit } from "./test-time-limit.js";

const CONFIG_FILE = ".github/agent-fix.yml";

function seconds(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000)).toLocaleString("en-US")} s`;
}

/** A command as inline code (a backtick in it would end the span). */
function code(command: string): string {
  return `\`${command.replace(/`/g, "'")}\``;
}

/** What is missing, as inline code when the output named it, else in general words. */
function named(subject: string | null, fallback: string): string {
  return subject ? code(subject) : fallback;
}

/** What the environment failure is, then what to change: never "fix the tests" for tests that never ran. */
function environmentHint(failure: Extract<TestFailureClass, { kind: "environment" }>): string {
  switch (failure.cause) {
    case "toolchain":
      return (
        `The test tools crashed at start-up${failure.subject ? ` (on ${code(failure.subject)})` : ""}: the sandbox's toolchain is likely older than they need. ` +
        "Declare the version the repository needs (`engines.node`, `.nvmrc`, `requires-python`, go.mod's `go`), " +
        `or run in an image that has it (\`sandbox.image\` in ${CONFIG_FILE}, one of the operator's \`repository.images\`).`
      );
    case "command":
      return (
        `${named(failure.subject, "A command the tests run")} is not installed in the sandbox. ` +
        `Install it in \`setup.commands\` (setup has network; the tests do not), or run in an image that has it (\`sandbox.image\` in ${CONFIG_FILE}).`
      );
    case "module":
      return (
        `${named(failure.subject, "A module the tests import")} is not installed where the tests run. ` +
        "Install the dependencies (and the package itself, e.g. `pip install -e .`) in `setup.commands`: setup has network, the tests do not."
      );
    case "network":
      return (
        `The test command reaches the network${failure.subject ? ` (${code(failure.subject)})` : ""}, and the sandbox has none while the tests run (only setup does). ` +
        "Fetch what the tests need in `setup.commands`, or set `test.command` to the tests alone: a download, a coverage badge or an upload does not belong in it."
      );
    case "service":
      return (
        "A test connects to a service (a database, a server) that is not running in the sandbox. " +
        "Start it in `test.command` before the tests, or leave the tests that need it out of `test.command`."
      );
  }
}

interface BaselineStopInput {
  branch: string;
  testCommand: string;
  run: Pick<TestRun, "exitCode" | "durationMs">;
  failure: TestFailureClass;
  /** `test.timeoutSeconds` and the operator's ceiling, for a timeout's hint. */
  configuredMs: number;
  ceilingMs: number;
}

/** The status's reason when the tests fail before any change and the run stops. */
export function baselineStopText(input: BaselineStopInput): string {
  const { branch, testCommand, run, failure } = input;
  const command = code(testCommand);
  switch (failure.kind) {
    case "timeout":
      return (
        `The tests did not finish on ${branch} before any change: ${command} timed out after ${seconds(input.configuredMs)} (\`test.timeoutSeconds\`), so a passing run could not be told apart. ` +
        `Raise \`test.timeoutSeconds\` in ${CONFIG_FILE} (up to the operator's ceiling of ${seconds(input.ceilingMs)}), or set \`test.command\` to a faster part of the tests.`
      );
    case "environment":
      return (
        `The tests already fail on ${branch} before any change (${command} exited ${run.exitCode}), and it looks like the environment, not the tests. ` +
        environmentHint(failure)
      );
    case "tests":
      return (
        `The tests already fail on ${branch} before any change (${command} exited ${run.exitCode}), so a passing run could not be told apart. ` +
        `They look like real failing tests: fix them on ${branch}, or set \`openPullRequestWhenBaselineFails: true\` in ${CONFIG_FILE} to let the agent work on the issue even so.`
      );
  }
}

const BASELINE_WORDS = {
  measured: `the larger of \`test.timeoutSeconds\` and ${BASELINE_FACTOR} × the baseline's time, within the operator's ceiling`,
  running: `${BASELINE_FACTOR} × \`test.timeoutSeconds\` while the baseline runs, within the operator's ceiling`,
} as const;

/** Why the run's limit is what it is, for a timeout's words. */
function limitBasis(limit: TestTimeLimit): string {
  if (limit.baseline.kind === "running") {
    return `the tests on the unchanged code were still running beside it on the same machine; the limit is ${BASELINE_WORDS.running}`;
  }
  const took = `the tests took ${seconds(limit.baseline.ms)} on the unchanged code, in the baseline on the same machine`;
  return `${took}; the limit is ${BASELINE_WORDS.measured}`;
}

/** "timed out after 300 s (…)": a timeout said as one, with its limit and what the baseline took. */
export function timeoutWords(limit: TestTimeLimit): string {
  return `timed out: it was stopped after ${seconds(limit.timeoutMs)} (${limitBasis(limit)})`;
}

/** The first line of the gate's observation for the model. */
export function gateVerdictText(testCommand: string, run: TestRun): string {
  const command = code(testCommand);
  if (run.passed) return "The tests pass.";
  if (!run.timedOut) return `The test command ${command} failed (exit ${run.exitCode}).`;
  const words = run.limit ? timeoutWords(run.limit) : `timed out after ${seconds(run.durationMs)}`;
  const likely =
    run.limit?.baseline.kind === "measured"
      ? " Your change likely makes a test hang or run far slower: look for a loop that does not end, or a wait with no timeout."
      : "";
  return `The test command ${command} ${words}.${likely}`;
}

type GateVerdict = Awaited<ReturnType<Gate>>;

/**
 * A failed gate's verdict with what the baseline said, when the tests failed before the change too (the
 * repository lets such a run go on): the model learns that the failure may not be its own, and what it
 * looks like, instead of chasing it.
 */
export function withBaselineNote(verdict: GateVerdict, baseline: TestRun, testCommand: string): GateVerdict {
  // Only a change the tests ran on: not one refused untested, nor "there is no change to test".
  if (verdict.passed || !verdict.submission || baseline.passed) return verdict;
  const before = baseline.timedOut ? "timed out" : `exited ${baseline.exitCode}`;
  const note =
    `Note: ${code(testCommand)} failed before your change too (on the unchanged code it ${before}; ` +
    `it looks like ${failureClassWords(classifyTestFailure(baseline))}), so part of this failure may have been there before. ` +
    `The last lines of that run:\n${testTail(baseline.output)}\n(end of the run before your change)`;
  return { ...verdict, output: `${note}\n\n${verdict.output}` };
}

/** Test ids shown in a verdict: a long list is cut, with its count. */
const SHOWN_TESTS = 15;

function testList(ids: readonly string[]): string {
  const shown = ids.slice(0, SHOWN_TESTS).map((id) => `  - ${id}`);
  if (ids.length > SHOWN_TESTS)
    shown.push(`  - … and ${(ids.length - SHOWN_TESTS).toLocaleString("en-US")} more`);
  return shown.join("\n");
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** Where the results came from, and what could not be read. */
function resultsBasis(run: TestRun): string {
  const results = run.results;
  if (!results) return "";
  const problems = results.problems.length > 0 ? `; not read: ${results.problems.join("; ")}` : "";
  return ` (test by test, from ${results.sources.join(" and ")}${problems})`;
}

/**
 * The first lines of the gate's observation when both runs have per-test results (per-test-verdict.ts):
 * which tests that passed before fail now, which new ones fail, which did not run, then the tests that
 * failed before too, which do not count against the change.
 */
export function perTestVerdictText(testCommand: string, run: TestRun, verdict: PerTestVerdict): string {
  const command = code(testCommand);
  const lines: string[] = [];
  if (verdict.passed) {
    const fixed =
      verdict.fixed.length > 0
        ? `, and ${count(verdict.fixed.length, "test")} that failed before pass now`
        : "";
    lines.push(
      `The tests pass: ${verdict.passing.toLocaleString("en-US")} of ${count(verdict.total, "test")} ${plural(verdict.passing, "passes", "pass")}, every test that passed before your change among them${fixed}${resultsBasis(run)}.`,
    );
    if (verdict.commandFailedAfterTests) {
      lines.push(
        `Note: ${command} exited ${run.exitCode} though no test fails that passed before, as it failed on the unchanged code too (a step after the tests, such as a download the sandbox has no network for): it is not counted against your change.`,
      );
    }
  } else if (verdict.failureChanged) {
    const { before, after } = verdict.failureChanged;
    lines.push(
      `The test command ${command} failed (exit ${run.exitCode}) though no test fails that passed before${resultsBasis(run)}, and it fails otherwise than on the unchanged code: there it looked like ${failureClassWords(before)}, now like ${failureClassWords(after)}. Something your change affects fails beside the tests that report each result (a step, or tests of another runner). Its output follows.`,
    );
  } else if (verdict.commandNewlyFails) {
    lines.push(
      `The test command ${command} failed (exit ${run.exitCode}) though no test fails that passed before${resultsBasis(run)}; on the unchanged code it exited 0, so something your change affects fails after or beside the tests. Its output follows.`,
    );
  } else {
    lines.push(`The tests fail with your change: ${command} exited ${run.exitCode}${resultsBasis(run)}.`);
    if (verdict.broken.length > 0)
      lines.push(
        `${count(verdict.broken.length, "test")} that passed before your change ${plural(verdict.broken.length, "fails", "fail")} now:`,
        testList(verdict.broken),
      );
    if (verdict.newFailing.length > 0)
      lines.push(
        `${count(verdict.newFailing.length, "test")} that did not pass before your change (new, or skipped there) ${plural(verdict.newFailing.length, "fails", "fail")}:`,
        testList(verdict.newFailing),
      );
    if (run.exitCode !== 0 && verdict.missing.length > 0)
      lines.push(
        `${count(verdict.missing.length, "test")} that passed before your change did not run (the command failed, so a test that could not run counts as failing):`,
        testList(verdict.missing),
      );
  }
  if (verdict.stillFailing.length > 0)
    lines.push(
      `${count(verdict.stillFailing.length, "test")} failed before your change too, and ${plural(verdict.stillFailing.length, "is", "are")} not counted against it:`,
      testList(verdict.stillFailing),
    );
  return lines.join("\n");
}

/** The status's line when the tests failed before any change but the run goes on, compared test by test. */
export function baselineGoesOnText(
  branch: string,
  testCommand: string,
  run: TestRun,
  tests: { passing: string[]; failing: string[] },
): string {
  const command = code(testCommand);
  const how = run.results ? ` (test by test, from ${run.results.sources.join(" and ")})` : "";
  const head = `The tests on ${branch} before any change: ${command} exited ${run.exitCode}, with ${count(tests.passing.length, "test")} passing${how}.`;
  if (tests.failing.length === 0) {
    return `${head} Every test passed: the command failed after them (offline, the sandbox cannot download or upload). The change is held to every test passing, not to the exit code.`;
  }
  const failing = tests.failing.slice(0, SHOWN_TESTS).map(code).join(", ");
  const more = tests.failing.length > SHOWN_TESTS ? ` and ${tests.failing.length - SHOWN_TESTS} more` : "";
  return `${head} ${count(tests.failing.length, "test")} already failed: ${failing}${more}. The change is held to the tests that passed, and those failures do not count against it.`;
}
