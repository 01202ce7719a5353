import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TrajectoryStep } from "../../../../src/shared/contracts.js";
import { observationResult } from "../../../../worker/github/observation-result.js";
import { renderTrajectorySummary } from "../../../../worker/github/summary.js";

const RESULTS = join(import.meta.dirname, "../../../fixtures/test-results");
/** A real run's output as the ACI hands it back: its state lines after it. */
const output = (name: string) =>
  `${readFileSync(join(RESULTS, name), "utf8").replace(/\n+$/, "")}\n(Open file: n/a)\n(Current directory: /workspace)`;

describe("the observation column shows a test run's result", () => {
  it.each([
    ["pytest-pass.txt", "3 passed, 1 deselected in 0.01s"],
    ["pytest-fail.txt", "1 failed, 3 passed in 0.03s"],
    ["unittest-pass.txt", "Ran 1 test in 0.000s: OK"],
    ["unittest-fail.txt", "Ran 1 test in 0.000s: FAILED (failures=1)"],
    ["go-pass.txt", "ok example.com/m 0.002s"],
    ["go-fail.txt", "FAIL example.com/m 0.009s"],
    ["go-fail-v.txt", "FAIL example.com/m 0.003s"],
    ["vitest-pass.txt", "Tests 3 passed (3)"],
    ["vitest-fail.txt", "Tests 1 failed | 2 passed (3)"],
    ["jest-fail.txt", "Tests: 1 failed, 2 passed, 3 total"],
    ["cargo-pass.txt", "test result: ok. 1 passed"],
    ["cargo-fail.txt", "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out"],
  ])("%s: %s", (file, result) => {
    expect(observationResult("bash", output(file))).toBe(result);
  });

  it("go test over several packages: the failed one, and how many of them failed", () => {
    const text = [
      "ok  \texample.com/m/a\t0.002s",
      "--- FAIL: TestB (0.00s)",
      "FAIL",
      "FAIL\texample.com/m/b\t0.003s",
      "?   \texample.com/m/c\t[no test files]",
      "ok  \texample.com/m/d\t0.001s",
      "FAIL",
    ].join("\n");
    expect(observationResult("bash", text)).toBe("FAIL example.com/m/b 0.003s (1 of 3 packages failed)");
    expect(observationResult("bash", "ok  \texample.com/m/a\t0.002s\nok  \texample.com/m/d\t(cached)")).toBe(
      "ok: 2 packages",
    );
  });

  it("another command shows its last meaningful line, not a rule or progress dots", () => {
    const build = "Collecting x\nInstalling collected packages: x\nSuccessfully installed x-1.0\n\n";
    expect(observationResult("bash", `${build}(Open file: n/a)\n(Current directory: /w)`)).toBe(
      "Successfully installed x-1.0",
    );
    expect(
      observationResult("bash", "Traceback (most recent call last):\n  ...\nValueError: bad\n-----"),
    ).toBe("ValueError: bad");
    expect(
      observationResult(
        "bash",
        "Your command ran successfully and did not produce any output.\n(Open file: n/a)",
      ),
    ).toBe("Your command ran successfully and did not produce any output.");
  });

  it("the ACI's other tools keep their first line: what they did", () => {
    const opened =
      "[File: src/a.py (10 lines total)]\n1:import os\n(Open file: src/a.py)\n(Current directory: /w)";
    expect(observationResult("open", opened)).toBe("[File: src/a.py (10 lines total)]");
    const gate =
      "Your change was not accepted yet: the repository's tests failed on it (attempt 1 of 3).\nThe test output:\n\n1 failed in 0.1s";
    expect(observationResult("submit", gate)).toBe(gate.split("\n")[0]);
  });

  it("is the summary's observation column", () => {
    const step: TrajectoryStep = {
      thought: "Run the tests.",
      action: "bash python3 -m pytest -q",
      observation: output("pytest-fail.txt"),
      response: "",
      execution_time: 1.5,
      state: { open_file: null, working_dir: "/workspace" },
      tool: "bash",
      args: { command: "python3 -m pytest -q" },
      tokens: { sent: 1, received: 1 },
    };
    const summary = renderTrajectorySummary({
      trajectory: [step],
      history: [],
      info: {
        exit_status: "submitted",
        submission: "",
        model_stats: { tokens_sent: 1, tokens_received: 1, api_calls: 1, instance_cost: 0 },
        gate: [],
        model: "replay:x",
        config_hash: "h",
        tool_bundle: "aci",
        aci_version: "1",
        sandbox_image: "img",
        started_at: "2026-11-30T10:00:00.000Z",
        finished_at: "2026-11-30T10:00:05.000Z",
      },
    });
    expect(summary).toContain(
      "| 1 | `bash` | command=python3 -m pytest -q | 1 failed, 3 passed in 0.03s | 1.5 s |",
    );
    expect(summary).not.toContain("..F.");
  });
});
