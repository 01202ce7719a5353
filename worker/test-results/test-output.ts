/**
 * Per-test results read from what test runners print by default (or in the verbose mode a repository's
 * command may ask for): pytest's `-rA` summary, unittest's `-v`, `go test`'s package and `--- FAIL:` lines,
 * cargo's libtest lines and TAP (node:test's default output when not on a terminal). Shared by the gate
 * (the run's baseline and gate steps) and the evaluation harness (worker/eval/runners.ts). Each
 * parser reads only lines its runner anchors, so another tool's output yields nothing rather than noise.
 */
import { recordOutcome, type TestOutcome, type TestOutcomes } from "./test-outcome.js";

/** `-rA`'s summary: `PASSED tests/test_a.py::test_x`, `FAILED ... - reason`, `ERROR file - reason`. */
export function parsePytestSummary(output: string): TestOutcomes {
  const results: TestOutcomes = new Map();
  for (const line of output.split("\n")) {
    const match = /^(PASSED|XPASS|FAILED|ERROR) (\S+)/.exec(line);
    if (match) results.set(match[2]!, match[1] === "PASSED" || match[1] === "XPASS" ? "passed" : "failed");
  }
  return results;
}

/**
 * `-v`: `test_x (pkg.mod.Class.test_x) ... ok` (Python 3.11+) or `test_x (pkg.mod.Class) ... ok`
 * (older). A module that fails to import shows as `unittest.loader._FailedTest`: its tests are unknown.
 */
export function parseUnittestVerbose(output: string): TestOutcomes {
  const results: TestOutcomes = new Map();
  const pattern =
    /^(\w+) \(([\w.]+)\)(?:\n.*)? \.\.\. (ok|FAIL|ERROR|expected failure|unexpected success)$/gm;
  for (const [, name = "", where = "", verdict] of output.matchAll(pattern)) {
    if (where.startsWith("unittest.")) continue;
    const id = where.endsWith(`.${name}`) ? where : `${where}.${name}`;
    results.set(id, verdict === "ok" || verdict === "expected failure" ? "passed" : "failed");
  }
  return results;
}

/** A top-level Go test's outcome in its package. */
interface GoTestLine {
  pkg: string;
  name: string;
  outcome: TestOutcome;
}

/** One package's line: `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.04s`, `FAIL\tpkg [build failed]`. */
const GO_PACKAGE = /^(ok|FAIL)\s+(\S+)(?:\s+\[(build failed|setup failed)\]|\t)/;

/**
 * `go test`'s output, with `-v` or without: each package's line, and the top-level tests printed
 * before it (`--- FAIL: TestX (0.00s)`; `--- PASS:` only with -v; subtests are indented, and count
 * through their parent). A package's output is printed together, so the tests before a package line
 * are that package's. A package that did not build is a failure of its own: none of its tests ran.
 */
export function parseGoTest(output: string): { packages: Map<string, TestOutcome>; tests: GoTestLine[] } {
  const packages = new Map<string, TestOutcome>();
  const tests: GoTestLine[] = [];
  let pending: { name: string; outcome: TestOutcome }[] = [];
  for (const line of output.split("\n")) {
    const test = /^--- (PASS|FAIL): (\S+)/.exec(line);
    if (test) {
      pending.push({ name: test[2]!, outcome: test[1] === "PASS" ? "passed" : "failed" });
      continue;
    }
    const pkg = GO_PACKAGE.exec(line);
    if (!pkg) continue;
    const name = pkg[3] ? `${pkg[2]} [${pkg[3]}]` : pkg[2]!;
    packages.set(name, pkg[1] === "ok" ? "passed" : "failed");
    for (const entry of pending) tests.push({ pkg: pkg[2]!, ...entry });
    pending = [];
  }
  // Tests with no package line after them (one package run alone, or the output cut): by name alone.
  for (const entry of pending) tests.push({ pkg: "", ...entry });
  return { packages, tests };
}

/** `go test`'s results by id: each package (`example.com/m/pkg`) and each test in it (`example.com/m/pkg.TestX`). */
export function goTestOutcomes(output: string): TestOutcomes {
  const { packages, tests } = parseGoTest(output);
  const results: TestOutcomes = new Map(packages);
  for (const test of tests)
    recordOutcome(results, test.pkg ? `${test.pkg}.${test.name}` : test.name, test.outcome);
  return results;
}

/**
 * libtest: `test path::to::name ... ok` or `... FAILED`, each under the `Running <target> (…)` or
 * `Doc-tests <crate>` line of its test binary, which prefixes its id: a unit test and an integration
 * test may share a name.
 */
export function parseCargoTest(output: string, { qualified = true } = {}): TestOutcomes {
  const results: TestOutcomes = new Map();
  let target = "";
  for (const line of output.split("\n")) {
    const running = /^\s+(?:Running (.+?)(?: \(.*\))?|(Doc-tests \S+))\s*$/.exec(line);
    if (running) {
      target = running[1] ?? running[2] ?? "";
      continue;
    }
    const test = /^test (.+?) \.\.\. (ok|FAILED)$/.exec(line);
    if (!test) continue;
    const id = qualified && target ? `${target} ${test[1]}` : test[1]!;
    recordOutcome(results, id, test[2] === "ok" ? "passed" : "failed");
  }
  return results;
}

/**
 * TAP (version 13 and 14, node:test's default output when not on a terminal, tape, tap): `ok 1 - name`
 * and `not ok 2 - name`, subtests indented by four spaces after their `# Subtest: name` line; the id is
 * the path of names (`group > inner`). `# SKIP` and `# TODO` are left out, as are YAML blocks (an
 * error message quoting "ok 1" is not a test). tape names its tests in comments (`# merge`) and its
 * assertions after them (`ok 1 should be equivalent`): the id is both (`merge > should be equivalent`),
 * and a name reported again in one test gets its count.
 * Read only from output that says it is TAP.
 */
export function parseTap(output: string): TestOutcomes {
  const results: TestOutcomes = new Map();
  if (!/^TAP version \d+\s*$/m.test(output)) return results;
  const path: string[] = [];
  const seen = new Map<string, number>();
  let yamlIndent: number | null = null;
  let group = "";
  for (const line of output.split("\n")) {
    const indent = line.length - line.trimStart().length;
    const text = line.trim();
    if (yamlIndent !== null) {
      if (indent === yamlIndent && text === "...") yamlIndent = null;
      continue;
    }
    if (text === "---") {
      yamlIndent = indent;
      continue;
    }
    const depth = Math.floor(indent / 4);
    const subtest = /^# Subtest: (.*)$/.exec(text);
    if (subtest) {
      path.length = depth;
      path[depth] = subtest[1]!;
      continue;
    }
    // tape's test names: `# merge` before its assertions (the summary's `# tests 15` comes after them all).
    const comment = depth === 0 ? /^# (.+)$/.exec(text) : null;
    if (comment) {
      group = comment[1]!.trim();
      continue;
    }
    const point = /^(not ok|ok)\b(?: \d+)?(?: -)?(?: (.*?))?(?:\s+#\s*(SKIP|TODO)\b.*)?$/i.exec(text);
    if (!point) continue;
    if (point[3]) continue;
    const name = (point[2] ?? "").replace(/\s+#.*$/, "");
    const names = depth === 0 && group ? [group, name] : [...path.slice(0, depth), name];
    let id = names.join(" > ");
    const count = (seen.get(id) ?? 0) + 1;
    seen.set(id, count);
    if (count > 1) id = `${id} (${count})`;
    path.length = depth;
    recordOutcome(results, id, point[1]!.toLowerCase() === "ok" ? "passed" : "failed");
  }
  return results;
}
