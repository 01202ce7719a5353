/**
 * Per-test results from a JUnit XML report: pytest's `--junitxml`, Maven Surefire's and Gradle's
 * `TEST-*.xml`, and the many tools that write the same shape (`<testsuites>` or `<testsuite>`, suites
 * nested or not, each `<testcase classname name>` with a `<failure>`, `<error>` or `<skipped>` child).
 * The report comes from the tests, which run the repository's code: it is parsed as untrusted text
 * (no DOCTYPE, so no entity of its own; fast-xml-parser bounds the built-in ones), and a malformed one
 * is an error the caller reports rather than a result.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { recordOutcome, type TestOutcomes } from "./test-outcome.js";

/** A report that is not JUnit XML agent-fix can read; `reason` says why. */
export class UnreadableReport extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "UnreadableReport";
  }
}

interface JunitNode {
  testsuite?: JunitNode[];
  testcase?: JunitNode[];
  failure?: unknown[];
  error?: unknown[];
  skipped?: unknown[];
  classname?: string;
  name?: string;
}

const LISTS = new Set(["testsuite", "testcase", "failure", "error", "skipped"]);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseAttributeValue: false,
  parseTagValue: false,
  // Only the structure and the names matter: test output in <system-out> is not kept.
  stopNodes: ["*.system-out", "*.system-err", "*.failure", "*.error", "*.skipped"],
  isArray: (name) => LISTS.has(name),
});

/** Each test case of a JUnit XML report by `classname::name` (its name alone without a class). */
export function parseJunitXml(text: string): TestOutcomes {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new UnreadableReport("it declares a DOCTYPE or entities");
  const valid = XMLValidator.validate(text);
  if (valid !== true)
    throw new UnreadableReport(`it is not well-formed XML (line ${valid.err.line}: ${valid.err.msg})`);
  const document = parser.parse(text) as { testsuites?: JunitNode | JunitNode[] | string } & JunitNode;
  const roots = [document.testsuites ?? {}, document].flat().filter((node) => typeof node === "object");
  const suites = roots.flatMap((root) => (root as JunitNode).testsuite ?? []);
  if (suites.length === 0) throw new UnreadableReport("it has no <testsuite>");
  const results: TestOutcomes = new Map();
  const visit = (suite: JunitNode) => {
    for (const testcase of suite.testcase ?? []) {
      if (testcase.skipped) continue;
      const name = String(testcase.name ?? "");
      const id = testcase.classname ? `${testcase.classname}::${name}` : name;
      recordOutcome(results, id, testcase.failure || testcase.error ? "failed" : "passed");
    }
    for (const nested of suite.testsuite ?? []) visit(nested);
  };
  for (const suite of suites) visit(suite);
  return results;
}
