/**
 * The gate's verdict test by test (the run's gate step), as SWE-bench grades: when the run on
 * the change and the baseline both have per-test results (test-reports.ts), the change passes when every
 * test that passed on the unchanged code passes and every test the baseline did not have passes. Tests
 * that failed before and still fail do not block it, nor does a command that fails after its tests (an
 * offline-only step such as a coverage badge's download), as long as it failed on the unchanged code too
 * and its failure looks the same (test-failure-class.ts): a test runner that reports nothing, beside one
 * that does, failing only with the change would otherwise hide behind the baseline's offline step.
 *
 * A test that passed before and is not reported after (renamed, removed, or in a package that no longer
 * builds) is absent, not failed: it blocks only when the command failed, since then it may be a test that
 * could not run. A command that exits 0 passes as the exit-code gate would pass it. Without results on
 * both sides, or after a timeout (its results are partial), the exit code decides as before.
 */
import type { TestFailureClass } from "../../../src/shared/github/baseline-failure.js";
import { classifyTestFailure } from "./test-failure-class.js";
import type { TestRun } from "./test-run.js";

export interface PerTestVerdict {
  passed: boolean;
  /** Passed on the unchanged code, fail with the change. */
  broken: string[];
  /** Not on the unchanged code (new, or skipped there), fail with the change. */
  newFailing: string[];
  /** Passed on the unchanged code, not reported with the change; they block only when the command failed. */
  missing: string[];
  /** Failed on the unchanged code and still fail: not counted against the change. */
  stillFailing: string[];
  /** Failed on the unchanged code and pass with the change. */
  fixed: string[];
  /** Tests reported with the change, and how many of them pass. */
  total: number;
  passing: number;
  /** The command failed though no test blocks: it failed after its tests on the unchanged code too. */
  commandFailedAfterTests: boolean;
  /**
   * The command failed with every test passing, and had not on the unchanged code, or failed otherwise
   * there (what each failure looks like): the exit code decides.
   */
  commandNewlyFails: boolean;
  /** What the failures look like when they differ: on the unchanged code, and with the change. */
  failureChanged: { before: TestFailureClass; after: TestFailureClass } | null;
}

/** Whether two failures look alike: the same class, and for the environment the same cause and subject. */
function sameFailure(a: TestFailureClass, b: TestFailureClass): boolean {
  if (a.kind !== "environment" || b.kind !== "environment") return a.kind === b.kind;
  return a.cause === b.cause && a.subject === b.subject;
}

/** The verdict of `run` against `baseline`, or null when the exit code alone decides. */
export function perTestVerdict(baseline: TestRun, run: TestRun): PerTestVerdict | null {
  if (!baseline.results || !run.results || baseline.timedOut || run.timedOut) return null;
  const before = baseline.results.tests;
  const after = run.results.tests;
  const broken: string[] = [];
  const newFailing: string[] = [];
  const stillFailing: string[] = [];
  const fixed: string[] = [];
  let passing = 0;
  for (const [id, outcome] of after) {
    const was = before.get(id);
    if (outcome === "passed") {
      passing += 1;
      if (was === "failed") fixed.push(id);
    } else if (was === "passed") broken.push(id);
    else if (was === "failed") stillFailing.push(id);
    else newFailing.push(id);
  }
  const missing = [...before]
    .filter(([id, outcome]) => outcome === "passed" && !after.has(id))
    .map(([id]) => id);
  const failed = run.exitCode !== 0;
  const testsPass = broken.length === 0 && newFailing.length === 0 && (!failed || missing.length === 0);
  const failedBefore = testsPass && failed && baseline.exitCode !== 0 ? classifyTestFailure(baseline) : null;
  const failsNow = failedBefore ? classifyTestFailure(run) : null;
  const failureChanged =
    failedBefore && failsNow && !sameFailure(failedBefore, failsNow)
      ? { before: failedBefore, after: failsNow }
      : null;
  const commandNewlyFails = testsPass && failed && (baseline.exitCode === 0 || failureChanged !== null);
  return {
    passed: testsPass && !commandNewlyFails,
    broken,
    newFailing,
    missing,
    stillFailing,
    fixed,
    total: after.size,
    passing,
    commandFailedAfterTests: testsPass && failed && !commandNewlyFails,
    commandNewlyFails,
    failureChanged,
  };
}

/**
 * Whether a baseline that failed still lets the gate tell a passing change apart: it reported tests and
 * some of them passed, so the gate can hold the change to those (null when it cannot: no results, a
 * timeout, or not one passing test).
 */
export function baselineTestsUsable(baseline: TestRun): { passing: string[]; failing: string[] } | null {
  if (!baseline.results || baseline.timedOut) return null;
  const passing: string[] = [];
  const failing: string[] = [];
  for (const [id, outcome] of baseline.results.tests) (outcome === "passed" ? passing : failing).push(id);
  return passing.length > 0 ? { passing, failing } : null;
}

/** Whether the baseline's tests all passed, per test (its command may have failed after them). */
export function baselineTestsPassed(baseline: TestRun): boolean {
  if (baseline.passed) return true;
  const usable = baselineTestsUsable(baseline);
  return usable !== null && usable.failing.length === 0;
}

/**
 * Whether the proof's run (the new tests on the unchanged code, the run's prove step) failed: test by test against the
 * baseline when both have results (a test failing that did not fail before), else by its exit code.
 */
export function proofFailed(baseline: TestRun, before: TestRun): boolean {
  const verdict = perTestVerdict(baseline, before);
  if (!verdict) return !before.passed;
  return verdict.broken.length > 0 || verdict.newFailing.length > 0;
}
