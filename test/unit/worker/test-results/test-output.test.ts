/**
 * Per-test results read from what the runners print, on their real output (test/fixtures/test-results/,
 * each produced by running the runner in the sandbox images).
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { goTestOutcomes, parseCargoTest, parseTap } from "../../../../worker/test-results/test-output.js";

const fixture = (name: string) =>
  readFile(new URL(`../../../fixtures/test-results/${name}`, import.meta.url), "utf8");

describe("go test's output", () => {
  it("without -v: each package, the failing tests in it, and a package that did not build", async () => {
    expect(Object.fromEntries(goTestOutcomes(await fixture("go-test.txt")))).toEqual({
      "example.com/m/bad": "failed",
      "example.com/m/bad.TestWrong": "failed",
      "example.com/m/bad.TestAlsoWrong": "failed",
      "example.com/m/broken [build failed]": "failed",
      "example.com/m/good": "passed",
    });
  });

  it("with -v: the passing top-level tests too, subtests through their parent", async () => {
    expect(Object.fromEntries(goTestOutcomes(await fixture("go-test-v.txt")))).toEqual({
      "example.com/m/bad": "failed",
      "example.com/m/bad.TestFine": "passed",
      "example.com/m/bad.TestWrong": "failed",
      "example.com/m/bad.TestAlsoWrong": "failed",
      "example.com/m/broken [build failed]": "failed",
      "example.com/m/good": "passed",
      "example.com/m/good.TestOne": "passed",
      "example.com/m/good.TestTwo": "passed",
    });
  });
});

describe("cargo test's output", () => {
  it("each test under its test binary, ignored ones left out", async () => {
    expect(Object.fromEntries(parseCargoTest(await fixture("cargo-test.txt")))).toEqual({
      "unittests src/lib.rs tests::it_breaks": "failed",
      "unittests src/lib.rs tests::it_works": "passed",
      "tests/api.rs it_works": "passed",
    });
  });

  it("by name alone for the evaluation's ids, a failure winning over a pass of the same name", async () => {
    expect(Object.fromEntries(parseCargoTest(await fixture("cargo-test.txt"), { qualified: false }))).toEqual(
      {
        "tests::it_breaks": "failed",
        "tests::it_works": "passed",
        it_works: "passed",
      },
    );
  });
});

describe("TAP", () => {
  const expected = {
    adds: "passed",
    breaks: "failed",
    "group > inner passes": "passed",
    "group > inner fails": "failed",
    group: "failed",
    "other file": "passed",
  };

  it("node:test's default output on Node 18 and 20, YAML blocks and skips left out", async () => {
    expect(Object.fromEntries(parseTap(await fixture("node-test-tap-node18.txt")))).toEqual(expected);
    expect(Object.fromEntries(parseTap(await fixture("node-test-tap-node20.txt")))).toEqual(expected);
  });

  it("nothing from output that does not say it is TAP", () => {
    expect(parseTap("ok 1 - looks like a test\nnot ok 2 - another\n").size).toBe(0);
  });

  it("tape: assertions under their test's name, a name reported again in one test with its count", () => {
    // tape 1.1's output for xtend 4.0.2 (npm), its first tests and its summary.
    const output = [
      "TAP version 13",
      "# merge",
      "ok 1 should be equivalent",
      "# undefined",
      "ok 2 should be equivalent",
      "not ok 3 should be equivalent",
      "",
      "1..3",
      "# tests 3",
      "# pass  2",
      "# fail  1",
    ].join("\n");
    expect(Object.fromEntries(parseTap(output))).toEqual({
      "merge > should be equivalent": "passed",
      "undefined > should be equivalent": "passed",
      "undefined > should be equivalent (2)": "failed",
    });
  });
});
