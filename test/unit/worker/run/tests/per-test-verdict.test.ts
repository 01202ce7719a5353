/**
 * The gate's verdict test by test against the baseline, on results read from real runner output
 * (test/fixtures/test-results/), and the words the model and the status get.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  baselineTestsPassed,
  baselineTestsUsable,
  perTestVerdict,
  proofFailed,
} from "../../../../../worker/run/tests/per-test-verdict.js";
import type { TestRun } from "../../../../../worker/run/tests/test-run.js";
import { baselineGoesOnText, perTestVerdictText } from "../../../../../worker/run/tests/test-verdicts.js";
import type { TestOutcome } from "../../../../../worker/test-results/test-outcome.js";
import { goTestOutcomes } from "../../../../../worker/test-results/test-output.js";

const goOutput = readFileSync(
  new URL("../../../../fixtures/test-results/go-test.txt", import.meta.url),
  "utf8",
);

function run(exitCode: number, tests: Record<string, TestOutcome> | null, output = ""): TestRun {
  return {
    passed: exitCode === 0,
    exitCode,
    timedOut: false,
    output,
    durationMs: 1_000,
    ...(tests
      ? {
          results: { tests: new Map(Object.entries(tests)), sources: ["vitest's JSON report"], problems: [] },
        }
      : {}),
  };
}

describe("perTestVerdict", () => {
  it("the offline badge: every test passed before and after, the command failed both times: a pass", () => {
    const baseline = run(1, { "a.test.js > adds": "passed", "a.test.js > subtracts": "passed" });
    const after = run(1, {
      "a.test.js > adds": "passed",
      "a.test.js > subtracts": "passed",
      "a.test.js > new": "passed",
    });
    const verdict = perTestVerdict(baseline, after);
    expect(verdict).toMatchObject({ passed: true, commandFailedAfterTests: true, total: 3, passing: 3 });
    const text = perTestVerdictText("npm test", after, verdict!);
    expect(text).toContain(
      "The tests pass: 3 of 3 tests pass, every test that passed before your change among them (test by test, from vitest's JSON report).",
    );
    expect(text).toContain(
      "Note: `npm test` exited 1 though no test fails that passed before, as it failed on the unchanged code too",
    );
  });

  it("go: pre-existing failures do not block, a test that passed before and fails now does", () => {
    const before = goTestOutcomes(goOutput);
    const baseline: TestRun = {
      ...run(1, null),
      results: { tests: before, sources: ["go test's output"], problems: [] },
    };
    // The change fixes the build of `broken`, and TestAlsoWrong; TestWrong still fails.
    const fixed = run(1, {
      "example.com/m/bad": "failed",
      "example.com/m/bad.TestWrong": "failed",
      "example.com/m/broken": "passed",
      "example.com/m/good": "passed",
    });
    const good = perTestVerdict(baseline, fixed);
    expect(good).toMatchObject({
      passed: true,
      stillFailing: ["example.com/m/bad", "example.com/m/bad.TestWrong"],
      broken: [],
      newFailing: [],
    });
    expect(perTestVerdictText("go test ./...", fixed, good!)).toContain(
      "2 tests failed before your change too, and are not counted against it:\n  - example.com/m/bad\n  - example.com/m/bad.TestWrong",
    );
    // `good` no longer passes, and a test not failing before (TestFine, passing and unlisted without -v) fails.
    const worse = run(1, {
      "example.com/m/bad": "failed",
      "example.com/m/bad.TestWrong": "failed",
      "example.com/m/bad.TestFine": "failed",
      "example.com/m/good": "failed",
    });
    const bad = perTestVerdict(baseline, worse);
    expect(bad).toMatchObject({
      passed: false,
      broken: ["example.com/m/good"],
      newFailing: ["example.com/m/bad.TestFine"],
    });
    const text = perTestVerdictText("go test ./...", worse, bad!);
    expect(text).toContain("The tests fail with your change: `go test ./...` exited 1 (test by test");
    expect(text).toContain("1 test that passed before your change fails now:\n  - example.com/m/good");
    expect(text).toContain(
      "1 test that did not pass before your change (new, or skipped there) fails:\n  - example.com/m/bad.TestFine",
    );
  });

  it("a test that passed before and is gone counts only when the command failed", () => {
    const baseline = run(0, { "t > a": "passed", "t > b": "passed" });
    expect(perTestVerdict(baseline, run(0, { "t > a": "passed" }))).toMatchObject({
      passed: true,
      missing: ["t > b"],
    });
    const failed = run(1, { "t > a": "passed" });
    const verdict = perTestVerdict(baseline, failed);
    expect(verdict).toMatchObject({ passed: false, missing: ["t > b"] });
    expect(perTestVerdictText("npm test", failed, verdict!)).toContain(
      "1 test that passed before your change did not run",
    );
  });

  it("a command that newly fails with every test passing fails: something after the tests broke", () => {
    const verdict = perTestVerdict(run(0, { a: "passed" }), run(2, { a: "passed" }));
    expect(verdict).toMatchObject({ passed: false, commandNewlyFails: true });
    expect(perTestVerdictText("make test", run(2, { a: "passed" }), verdict!)).toContain(
      "on the unchanged code it exited 0, so something your change affects fails after or beside the tests",
    );
  });

  it("a command failing otherwise than on the unchanged code fails, though the reported tests pass", () => {
    // `vitest run && mocha && curl badge`: offline, the badge fails; with the change, mocha (which
    // reports nothing per test) fails first: real test output, not the badge's offline failure.
    const curl = readFileSync(
      new URL("../../../../fixtures/test-outputs/curl-offline.txt", import.meta.url),
      "utf8",
    );
    const mocha = readFileSync(
      new URL("../../../../fixtures/test-outputs/vitest-failing.txt", import.meta.url),
      "utf8",
    );
    const baseline = run(6, { a: "passed" }, curl);
    expect(perTestVerdict(baseline, run(6, { a: "passed" }, curl))).toMatchObject({
      passed: true,
      failureChanged: null,
    });
    const after = run(1, { a: "passed" }, mocha);
    const verdict = perTestVerdict(baseline, after);
    expect(verdict).toMatchObject({ passed: false, commandNewlyFails: true });
    expect(perTestVerdictText("npm test", after, verdict!)).toContain(
      "and it fails otherwise than on the unchanged code: there it looked like the environment: ",
    );
  });

  it("the exit code decides without results on both sides, or after a timeout", () => {
    expect(perTestVerdict(run(1, null), run(0, { a: "passed" }))).toBeNull();
    expect(perTestVerdict(run(0, { a: "passed" }), run(1, null))).toBeNull();
    expect(
      perTestVerdict(run(0, { a: "passed" }), { ...run(137, { a: "passed" }), timedOut: true }),
    ).toBeNull();
  });
});

describe("the baseline and the proof, per test", () => {
  it("a baseline goes on when some tests passed; one with no passing test or no results does not", () => {
    expect(baselineTestsUsable(run(1, { a: "passed", b: "failed" }))).toEqual({
      passing: ["a"],
      failing: ["b"],
    });
    expect(baselineTestsUsable(run(1, { b: "failed" }))).toBeNull();
    expect(baselineTestsUsable(run(1, null))).toBeNull();
    expect(baselineTestsPassed(run(1, { a: "passed" }))).toBe(true);
    expect(baselineTestsPassed(run(1, { a: "passed", b: "failed" }))).toBe(false);
  });

  it("the status says the command failed after passing tests, or which tests failed before", () => {
    const badge = baselineGoesOnText("main", "npm test", run(1, { a: "passed" }), {
      passing: ["a"],
      failing: [],
    });
    expect(badge).toBe(
      "The tests on main before any change: `npm test` exited 1, with 1 test passing (test by test, from vitest's JSON report). Every test passed: the command failed after them (offline, the sandbox cannot download or upload). The change is held to every test passing, not to the exit code.",
    );
    const some = baselineGoesOnText("main", "npm test", run(1, { a: "passed", b: "failed" }), {
      passing: ["a"],
      failing: ["b"],
    });
    expect(some).toContain("1 test already failed: `b`. The change is held to the tests that passed");
  });

  it("the proof fails when a new test fails on the unchanged code, not for the command's offline step", () => {
    const baseline = run(1, { a: "passed" });
    expect(proofFailed(baseline, run(1, { a: "passed", "new test": "failed" }))).toBe(true);
    expect(proofFailed(baseline, run(1, { a: "passed", "new test": "passed" }))).toBe(false);
    expect(proofFailed(run(1, null), run(1, null))).toBe(true);
  });
});
