/**
 * The runner of an instance without a test_command, chosen from what repository detection finds on
 * the detect fixtures, and each runner's report read from its real output format.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { filesToRead } from "../../../../worker/config/detect/index.js";
import { testCommandFor } from "../../../../worker/eval/grade.js";
import { chooseRunner } from "../../../../worker/eval/test-runner.js";

const FIXTURES = new URL("../../../fixtures/detect/", import.meta.url).pathname;
const PYTHON = `"$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)"`;

async function runnerOf(name: string) {
  const root = join(FIXTURES, name);
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
  const contents = new Map(
    await Promise.all(
      filesToRead(paths).map(async (path) => [path, await readFile(join(root, path), "utf8")] as const),
    ),
  );
  return chooseRunner({ paths, contents });
}

describe("chooseRunner: the runner of the repository's root part", () => {
  it("pytest: node ids, and -rA's summary for the report", async () => {
    const found = await runnerOf("python-pytest");
    expect(found?.runner.kind).toBe("pytest");
    expect(found?.runner.template).toBe(`${PYTHON} -m pytest -p no:cacheprovider {tests}`);
    expect(found?.runner.reportCommand(["tests/test_a.py", "tests/b c.py"])).toBe(
      `${PYTHON} -m pytest -p no:cacheprovider -rA tests/test_a.py 'tests/b c.py'`,
    );
    expect(found?.setup[0]).toBe(
      "python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
    );
  });

  it("unittest: dotted names, the report by module", async () => {
    const found = await runnerOf("python-unittest");
    expect(found?.runner.kind).toBe("unittest");
    expect(found?.runner.template).toBe(`${PYTHON} -m unittest {tests}`);
    expect(found?.runner.reportCommand(["tests/test_app.py"])).toBe(
      `${PYTHON} -m unittest -v tests.test_app`,
    );
  });

  it("go: test names joined into one -run pattern, the report by package", async () => {
    const found = await runnerOf("go");
    expect(found?.runner.kind).toBe("go");
    const env = 'GOMODCACHE="$PWD/.agent-fix-cache/go/mod" GOCACHE="$PWD/.agent-fix-cache/go/build"';
    expect(found?.runner.reportCommand(["a_test.go", "pkg/x/b_test.go"])).toBe(`${env} go test -v . ./pkg/x`);
    // What the shell makes of the template: `go` replaced by echo shows the arguments go would get.
    const command = testCommandFor(found!.runner.template, ["TestAdd", "TestSub/case"]).replace(
      "go test",
      "echo",
    );
    const { stdout } = await promisify(execFile)("sh", ["-c", command]);
    expect(stdout.trim()).toBe("./... -run ^(TestAdd|TestSub/case)$");
  });

  it("cargo: exact test names; the report runs every test", async () => {
    const found = await runnerOf("rust");
    expect(found?.runner.kind).toBe("cargo");
    expect(found?.runner.template).toBe(
      'CARGO_HOME="$PWD/.agent-fix-cache/cargo" cargo test --offline -- --exact {tests}',
    );
  });

  it("JavaScript: jest, vitest, or the test script, file by file", async () => {
    expect((await runnerOf("node-jest"))?.runner.template).toBe("npx jest {tests}");
    expect((await runnerOf("node-vitest"))?.runner.template).toBe("npx vitest run {tests}");
    const npm = await runnerOf("node-npm");
    expect(npm?.runner.template).toBe("npm test -- {tests}");
    expect(npm?.setup).toEqual(["npm ci"]);
    const report = npm!.runner.reportCommand(["test/a.test.js"]);
    expect(report).toBe(
      'if npm test -- test/a.test.js >/dev/null 2>&1; then echo "agent-fix-test-file passed test/a.test.js"; else echo "agent-fix-test-file failed test/a.test.js"; fi',
    );
  });

  it("none for ecosystems without known test ids, or nothing to test", async () => {
    expect(await runnerOf("ruby-rspec")).toBeNull();
    expect(await runnerOf("java-maven")).toBeNull();
    expect(await runnerOf("nothing")).toBeNull();
  });
});

describe("reading each runner's report", () => {
  it("pytest -rA", async () => {
    const { runner } = (await runnerOf("python-pytest"))!;
    const output = [
      "tests/test_a.py .F",
      "=========================== short test summary info ============================",
      "PASSED tests/test_a.py::test_ok",
      "PASSED tests/test_a.py::test_param[1-2]",
      "FAILED tests/test_a.py::test_empty - ZeroDivisionError: division by zero",
      "ERROR tests/test_b.py - ImportError: cannot import name 'median'",
      "SKIPPED [1] tests/test_a.py:9: not on linux",
      "==================== 1 failed, 2 passed, 1 error in 0.05s =====================",
    ].join("\n");
    expect(Object.fromEntries(runner.parse(output))).toEqual({
      "tests/test_a.py::test_ok": "passed",
      "tests/test_a.py::test_param[1-2]": "passed",
      "tests/test_a.py::test_empty": "failed",
      "tests/test_b.py": "failed",
    });
  });

  it("unittest -v, as Python 3.11+ and older write it; import failures name no test", async () => {
    const { runner } = (await runnerOf("python-unittest"))!;
    const output = [
      "test_clamp (tests.test_ops.OpsTest.test_clamp) ... ok",
      "test_mean (tests.test_ops.OpsTest)",
      "The mean of a list. ... FAIL",
      "test_old (tests.test_old.OldTest) ... ERROR",
      "test_skip (tests.test_ops.OpsTest.test_skip) ... skipped 'later'",
      "test_new (unittest.loader._FailedTest.test_new) ... ERROR",
    ].join("\n");
    expect(Object.fromEntries(runner.parse(output))).toEqual({
      "tests.test_ops.OpsTest.test_clamp": "passed",
      "tests.test_ops.OpsTest.test_mean": "failed",
      "tests.test_old.OldTest.test_old": "failed",
    });
  });

  it("go test -v: top-level tests; a subtest's failure fails its test", async () => {
    const { runner } = (await runnerOf("go"))!;
    const output = [
      "=== RUN   TestAdd",
      "--- PASS: TestAdd (0.00s)",
      "=== RUN   TestTable",
      "    --- FAIL: TestTable/zero (0.00s)",
      "--- FAIL: TestTable (0.00s)",
      "FAIL\texample.com/calc\t0.004s",
    ].join("\n");
    expect(Object.fromEntries(runner.parse(output))).toEqual({ TestAdd: "passed", TestTable: "failed" });
  });

  it("cargo test", async () => {
    const { runner } = (await runnerOf("rust"))!;
    const output = [
      "running 2 tests",
      "test tests::adds ... ok",
      "test tests::subtracts ... FAILED",
      "test tests::later ... ignored",
      "test src/lib.rs - add (line 3) ... ok",
    ].join("\n");
    expect(Object.fromEntries(runner.parse(output))).toEqual({
      "tests::adds": "passed",
      "tests::subtracts": "failed",
      "src/lib.rs - add (line 3)": "passed",
    });
  });
});
