import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { classifyTestFailure } from "../../../../../worker/run/tests/test-failure-class.js";

// Real outputs, produced in the sandbox images (test/fixtures/test-outputs/README.md says how): the
// classifier must tell the environment from real failing tests on what the tools really print.
const output = (name: string) =>
  readFileSync(new URL(`../../../../fixtures/test-outputs/${name}.txt`, import.meta.url), "utf8");
const classify = (name: string, exitCode: number) =>
  classifyTestFailure({ exitCode, timedOut: false, output: output(name) });

describe("classifyTestFailure on real outputs", () => {
  it.each([
    // vitest 4 (rolldown) on the slim image's Node 18: a crash at start-up, not a test.
    ["vitest4-node18", 1, "toolchain", "node:util", "does not provide an export named 'styleText'"],
    ["pytest-missing", 127, "command", "pytest", "bash: line 1: pytest: command not found"],
    ["npm-jest-missing", 127, "command", "jest", "sh: 1: jest: not found"],
    ["python-module-missing", 1, "module", "requests", "No module named 'requests'"],
    ["pytest-import-error", 2, "module", "yaml_nonexistent", "No module named 'yaml_nonexistent'"],
    ["node-module-missing", 1, "module", "left-pad", "Cannot find package 'left-pad'"],
    ["curl-offline", 6, "network", "img.shields.io", "Could not resolve host: img.shields.io"],
    ["npm-offline", 1, "network", "registry.npmjs.org", "getaddrinfo EAI_AGAIN registry.npmjs.org"],
    ["python-urlopen-offline", 1, "network", null, "Temporary failure in name resolution"],
    ["go-offline", 1, "network", "proxy.golang.org", "dial tcp: lookup proxy.golang.org"],
    // Every test passed; a badge download at the end of `npm test` failed offline.
    ["vitest-pass-badge-offline", 6, "network", "img.shields.io", "Could not resolve host"],
    ["vitest-fetch-offline", 1, "network", "api.github.com", "getaddrinfo EAI_AGAIN api.github.com"],
    ["pytest-connection-refused", 1, "service", null, "Connection refused"],
  ])("%s (exit %i) is the environment: %s", (name, exitCode, cause, subject, evidence) => {
    const failure = classify(name, exitCode);
    expect(failure).toMatchObject({ kind: "environment", cause, subject });
    if (failure.kind !== "environment") throw new Error("not the environment");
    expect(failure.evidence).toContain(evidence);
    // The evidence is one line of the output, as printed.
    expect(failure.evidence).not.toContain("\n");
    expect(output(name)).toContain(failure.evidence);
  });

  it.each([
    ["pytest-failing", 1],
    ["go-test-failing", 1],
    ["vitest-failing", 1],
  ])("%s (exit %i) is real failing tests", (name, exitCode) => {
    expect(classify(name, exitCode)).toEqual({ kind: "tests" });
  });
});

describe("classifyTestFailure", () => {
  it("a timeout is a timeout, whatever was printed before the kill", () => {
    expect(classifyTestFailure({ exitCode: 137, timedOut: true, output: output("curl-offline") })).toEqual({
      kind: "timeout",
    });
  });

  it("a test that only mentions the words stays a test failure", () => {
    // An assertion about a shell's message is not a shell's message: the patterns are anchored as printed.
    const text = [
      "FAILED tests/test_shell.py::test_message - AssertionError: assert 'x' == 'bash: line 1: foo: command not found'",
      "1 failed in 0.01s",
    ].join("\n");
    expect(classifyTestFailure({ exitCode: 1, timedOut: false, output: text })).toEqual({ kind: "tests" });
  });

  it("exit 127 with no message is a command the shell could not run", () => {
    expect(classifyTestFailure({ exitCode: 127, timedOut: false, output: "" })).toMatchObject({
      kind: "environment",
      cause: "command",
      subject: null,
    });
  });

  it("colour codes do not hide a message, and a long line is quoted bounded", () => {
    const long = `\u001b[31mError: Cannot find module 'left-pad'\u001b[39m ${"x".repeat(1_000)}`;
    const failure = classifyTestFailure({ exitCode: 1, timedOut: false, output: long });
    expect(failure).toMatchObject({ kind: "environment", cause: "module", subject: "left-pad" });
    if (failure.kind !== "environment") throw new Error("not the environment");
    expect(failure.evidence.length).toBeLessThanOrEqual(300);
    expect(failure.evidence.startsWith("Error: Cannot find module")).toBe(true);
  });

  it("a name the output gives is kept only in safe characters", () => {
    const failure = classifyTestFailure({
      exitCode: 127,
      timedOut: false,
      output: "bash: line 1: `evil`@x: command not found\n",
    });
    // Not a name the pattern takes: the exit status still says it was a command, naming none.
    expect(failure).toMatchObject({ kind: "environment", cause: "command", subject: null });
  });
});
