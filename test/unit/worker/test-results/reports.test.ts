/**
 * Per-test results from the report files the runners write (JUnit XML, jest's and vitest's JSON), on
 * real reports (test/fixtures/test-results/), and reports that cannot be trusted refused with a reason.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parseJestJson } from "../../../../worker/test-results/jest-json.js";
import { parseJunitXml, UnreadableReport } from "../../../../worker/test-results/junit-xml.js";

const fixture = (name: string) =>
  readFile(new URL(`../../../fixtures/test-results/${name}`, import.meta.url), "utf8");

describe("JUnit XML", () => {
  it("pytest's report: class and name, skipped tests left out", async () => {
    expect(Object.fromEntries(parseJunitXml(await fixture("pytest-junit.xml")))).toEqual({
      "tests.test_a::test_adds": "passed",
      "tests.test_a::test_breaks": "failed",
      "tests.test_a.TestGroup::test_param[1]": "passed",
      "tests.test_a.TestGroup::test_param[2]": "failed",
    });
  });

  it("a module that cannot be collected is a failing test named after it", async () => {
    expect(Object.fromEntries(parseJunitXml(await fixture("pytest-collection-error.xml")))).toEqual({
      "tests.test_b": "failed",
    });
  });

  it("refuses a DOCTYPE (entities of its own), malformed XML, and XML that is no test report", () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite><testcase name="&a;"/></testsuite>`;
    expect(() => parseJunitXml(bomb)).toThrow(UnreadableReport);
    expect(() => parseJunitXml("<testsuite><testcase name='x'></testsuite>")).toThrow(/not well-formed/);
    expect(() => parseJunitXml("<html><body/></html>")).toThrow(/no <testsuite>/);
  });

  it("Maven Surefire's report, a nested class's test under its own class", async () => {
    expect(Object.fromEntries(parseJunitXml(await fixture("surefire-TEST-ex.CalcTest-Inner.xml")))).toEqual({
      "ex.CalcTest::breaks": "failed",
      "ex.CalcTest::adds": "passed",
      "ex.CalcTest$Inner::innerPasses": "passed",
    });
  });

  it("suites nested in suites, a root <testsuite> as Surefire writes it", () => {
    const xml = `<testsuite name="a"><testsuite name="b"><testcase classname="ex.T" name="one"/><testcase classname="ex.T" name="two"><error message="boom"/></testcase></testsuite></testsuite>`;
    expect(Object.fromEntries(parseJunitXml(xml))).toEqual({ "ex.T::one": "passed", "ex.T::two": "failed" });
  });
});

describe("jest's and vitest's JSON report", () => {
  it("vitest: each file and each test by its path of names; a file that cannot import fails", async () => {
    expect(Object.fromEntries(parseJestJson(await fixture("vitest-report.json"), "/pt/js"))).toEqual({
      "test/a.test.mjs": "failed",
      "test/a.test.mjs > adds": "passed",
      "test/a.test.mjs > breaks": "failed",
      "test/a.test.mjs > group > inner passes": "passed",
      "test/b.test.mjs": "failed",
    });
  });

  it("jest: the same shape", async () => {
    expect(Object.fromEntries(parseJestJson(await fixture("jest-report.json"), "/pt/js"))).toEqual({
      "jt/a.test.js": "failed",
      "jt/a.test.js > adds": "passed",
      "jt/a.test.js > breaks": "failed",
      "jt/a.test.js > group > inner passes": "passed",
      "jt/b.test.js": "failed",
    });
  });

  it("refuses what is not JSON or not such a report", () => {
    expect(() => parseJestJson("{", "/w")).toThrow(/not JSON/);
    expect(() => parseJestJson('{"results": []}', "/w")).toThrow(/not a jest or vitest JSON report/);
  });
});
