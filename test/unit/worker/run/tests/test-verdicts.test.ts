import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { classifyTestFailure } from "../../../../../worker/run/tests/test-failure-class.js";
import type { TestRun } from "../../../../../worker/run/tests/test-run.js";
import { gateTimeLimit } from "../../../../../worker/run/tests/test-time-limit.js";
import {
  baselineStopText,
  gateVerdictText,
  withBaselineNote,
} from "../../../../../worker/run/tests/test-verdicts.js";

const output = (name: string) =>
  readFileSync(new URL(`../../../../fixtures/test-outputs/${name}.txt`, import.meta.url), "utf8");

function stopText(name: string, exitCode: number, timedOut = false): string {
  const run = { exitCode, timedOut, output: output(name), durationMs: 2_000 };
  return baselineStopText({
    branch: "main",
    testCommand: "npm test",
    run,
    failure: classifyTestFailure(run),
    configuredMs: 300_000,
    ceilingMs: 1_800_000,
  });
}

const OPEN_ANYWAY = "openPullRequestWhenBaselineFails: true";

describe("baselineStopText", () => {
  it("real failing tests: fix them, or let the run go on", () => {
    const text = stopText("vitest-failing", 1);
    expect(text).toContain("The tests already fail on main before any change (`npm test` exited 1)");
    expect(text).toContain("They look like real failing tests: fix them on main");
    expect(text).toContain(OPEN_ANYWAY);
  });

  it("a toolchain crash at start-up names the toolchain, not the tests", () => {
    const text = stopText("vitest4-node18", 1);
    expect(text).toContain("it looks like the environment, not the tests");
    expect(text).toContain("crashed at start-up (on `node:util`)");
    expect(text).toContain("`engines.node`");
    expect(text).toContain("`sandbox.image`");
    // An agent that cannot run one test is no help: the hint does not offer it.
    expect(text).not.toContain(OPEN_ANYWAY);
  });

  it("a missing command, a missing module, the network, a service: each its own hint", () => {
    expect(stopText("pytest-missing", 127)).toContain(
      "not the tests. `pytest` is not installed in the sandbox",
    );
    expect(stopText("pytest-missing", 127)).toContain("`setup.commands`");
    expect(stopText("python-module-missing", 1)).toContain(
      "not the tests. `requests` is not installed where the tests run",
    );
    // A command the output does not name is said in general words.
    const unnamed = { exitCode: 127, timedOut: false, output: "", durationMs: 1 };
    expect(
      baselineStopText({
        branch: "main",
        testCommand: "make test",
        run: unnamed,
        failure: classifyTestFailure(unnamed),
        configuredMs: 300_000,
        ceilingMs: 1_800_000,
      }),
    ).toContain("not the tests. A command the tests run is not installed in the sandbox");
    const network = stopText("vitest-pass-badge-offline", 6);
    expect(network).toContain("reaches the network (`img.shields.io`)");
    expect(network).toContain("set `test.command` to the tests alone");
    expect(stopText("pytest-connection-refused", 1)).toContain("a service (a database, a server)");
    for (const name of ["pytest-missing", "python-module-missing", "pytest-connection-refused"]) {
      expect(stopText(name, 1)).not.toContain(OPEN_ANYWAY);
    }
  });

  it("a timeout says it was one, with the setting and the ceiling", () => {
    const text = stopText("pytest-failing", 137, true);
    expect(text).toContain("`npm test` timed out after 300 s (`test.timeoutSeconds`)");
    expect(text).toContain("up to the operator's ceiling of 1,800 s");
  });
});

function run(overrides: Partial<TestRun>): TestRun {
  return { passed: false, exitCode: 137, timedOut: true, output: "", durationMs: 300_000, ...overrides };
}

describe("gateVerdictText", () => {
  it("a pass and a failure as before", () => {
    expect(gateVerdictText("go test ./...", run({ passed: true, exitCode: 0, timedOut: false }))).toBe(
      "The tests pass.",
    );
    expect(gateVerdictText("go test ./...", run({ exitCode: 1, timedOut: false }))).toBe(
      "The test command `go test ./...` failed (exit 1).",
    );
  });

  it("a timeout says it was one, its limit, and what the baseline took on the same machine", () => {
    const limit = gateTimeLimit({ configuredMs: 300_000, ceilingMs: 1_800_000, baselineMs: 54_000 });
    const text = gateVerdictText("go test ./...", run({ limit }));
    expect(text).toContain("`go test ./...` timed out: it was stopped after 300 s");
    expect(text).toContain("the tests took 54 s on the unchanged code, in the baseline on the same machine");
    expect(text).toContain("3 × the baseline's time");
    expect(text).toContain("likely makes a test hang");
  });

  it("a timeout while the baseline still ran says so, and blames no change", () => {
    const limit = gateTimeLimit({ configuredMs: 300_000, ceilingMs: 1_800_000, baselineMs: null });
    const text = gateVerdictText("go test ./...", run({ durationMs: 900_000, limit }));
    expect(text).toContain("stopped after 900 s");
    expect(text).toContain("still running beside it");
    expect(text).not.toContain("likely makes a test hang");
  });
});

describe("withBaselineNote", () => {
  const failing = {
    passed: false,
    output: "The test command `npm test` failed (exit 1).\n1 failed",
    submission: "diff",
  };
  const before = run({
    exitCode: 1,
    timedOut: false,
    output: output("vitest-pass-badge-offline"),
    durationMs: 2_000,
  });

  it("tells the model the tests failed before its change too, what it looks like, and how that run ended", () => {
    const noted = withBaselineNote(failing, before, "npm test");
    expect(noted.output).toMatch(
      /^Note: `npm test` failed before your change too \(on the unchanged code it exited 1; it looks like the environment: the network/,
    );
    expect(noted.output).toContain(
      "curl: (6) Could not resolve host: img.shields.io\n(end of the run before your change)",
    );
    expect(noted.output.endsWith(failing.output)).toBe(true);
    expect(noted.submission).toBe("diff");
  });

  it("says nothing when the baseline passed, the gate passed, or nothing was tested", () => {
    const passedBefore = run({ passed: true, exitCode: 0, timedOut: false });
    expect(withBaselineNote(failing, passedBefore, "npm test")).toBe(failing);
    const passed = { ...failing, passed: true };
    expect(withBaselineNote(passed, before, "npm test")).toBe(passed);
    const untested = { passed: false, untested: true, output: "Your change was not submitted" };
    expect(withBaselineNote(untested, before, "npm test")).toBe(untested);
    const empty = { passed: false, submission: "", output: "there is no change to test." };
    expect(withBaselineNote(empty, before, "npm test")).toBe(empty);
  });
});
