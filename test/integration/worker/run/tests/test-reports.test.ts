/**
 * Per-test results from each runner's own command, for real in the sandbox images (real Docker): each
 * small project is written here, set up with setup's network where it needs packages (vitest and jest
 * from the npm registry), then its tests run through `runTests` with the network cut, as the baseline and
 * the gate run them. What is checked: the environment and the Node preload really make each runner report
 * every test (pytest's JUnit XML, vitest's and jest's JSON, on Node 18 and 20), go's, cargo's and
 * node:test's own output is read, the output the model sees is the runner's usual one, and a test
 * command whose offline step fails after passing tests still has every test as passed.
 */
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandboxProvider } from "../../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE, SANDBOX_RICH_IMAGE } from "../../../../../sandbox/version.js";
import type { Sandbox } from "../../../../../src/shared/contracts.js";
import { runTests } from "../../../../../worker/run/tests/test-run.js";
import { requireSandboxImage } from "../../../../support/services.js";

const slim = await requireSandboxImage(SANDBOX_IMAGE);
const rich = await requireSandboxImage(SANDBOX_RICH_IMAGE);
const HOST_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** A failing offline step after the tests, as a real `npm test` that downloads its coverage badge. */
const BADGE = `node -e "fetch('https://img.shields.io/badge/coverage-100%25-green').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"`;

const SUREFIRE = readFileSync(
  new URL("../../../../fixtures/test-results/surefire-TEST-ex.CalcTest-Inner.xml", import.meta.url),
  "utf8",
);

const PROJECTS: Record<string, Record<string, string>> = {
  jvm: {
    "pom.xml": "<project/>\n",
    // Left by setup (a kept environment): older than the run, so not this run's result.
    "target/surefire-reports/TEST-ex.Stale.xml":
      '<testsuite><testcase classname="ex.Stale" name="old"/></testsuite>',
  },
  pytest: {
    "tests/test_math.py":
      "def test_adds():\n    assert 1 + 1 == 2\n\ndef test_breaks():\n    assert 1 + 1 == 3\n",
  },
  go: {
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "calc/calc_test.go":
      'package calc\n\nimport "testing"\n\nfunc TestAdds(t *testing.T) {}\nfunc TestBreaks(t *testing.T) { t.Fatal("no") }\n',
    "ok/ok_test.go": 'package ok\n\nimport "testing"\n\nfunc TestFine(t *testing.T) {}\n',
  },
  cargo: {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs":
      "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(1 + 1, 2); }\n    #[test]\n    fn breaks() { assert_eq!(1 + 1, 3); }\n}\n",
  },
  "node-test": {
    "package.json": JSON.stringify({ name: "n", private: true, scripts: { test: "node --test" } }),
    "test/math.test.js":
      'const test = require("node:test");\nconst assert = require("node:assert");\ntest("adds", () => assert.strictEqual(1 + 1, 2));\ntest("breaks", () => assert.strictEqual(1 + 1, 3));\n',
  },
  vitest: {
    "package.json": JSON.stringify({
      name: "v",
      private: true,
      type: "module",
      scripts: { test: `vitest run && ${BADGE}` },
      devDependencies: { vitest: "3.2.4" },
    }),
    "test/math.test.js":
      'import { expect, test } from "vitest";\ntest("adds", () => expect(1 + 1).toBe(2));\ntest("subtracts", () => expect(2 - 1).toBe(1));\n',
  },
  jest: {
    "package.json": JSON.stringify({
      name: "j",
      private: true,
      scripts: { test: "jest" },
      devDependencies: { jest: "29.7.0" },
    }),
    "math.test.js":
      'test("adds", () => expect(1 + 1).toBe(2));\ndescribe("group", () => { test("breaks", () => expect(1 + 1).toBe(3)); });\n',
  },
};

async function writeProject(root: string, name: string): Promise<void> {
  for (const [path, text] of Object.entries(PROJECTS[name]!)) {
    await mkdir(dirname(join(root, name, path)), { recursive: true });
    await writeFile(join(root, name, path), text);
  }
}

/** Each project as its own workspace: a git repository, as the gate's are. */
async function sandboxFor(image: string, name: string, source: string): Promise<Sandbox> {
  const dir = join(source, name);
  const sandbox = await new DockerSandboxProvider({ caBundle: HOST_BUNDLE }).create({
    sourceDir: dir,
    jobId: `test-reports-${name}`,
    image,
    network: true,
  });
  await sandbox.exec("git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm base", {
    cwd: sandbox.workdir,
  });
  return sandbox;
}

const run = (sandbox: Sandbox, command: string) => runTests(sandbox, { command, timeoutMs: 600_000 });
const outcomes = (tests: Map<string, string> | undefined) => Object.fromEntries(tests ?? []);

// Each test has its own sandbox (its project copied in, its own container): they share nothing but the
// written projects, so they run side by side, the npm installs' downloads and the containers' starts
// overlapping.
describe.concurrent("per-test results from the repository's own command", () => {
  let source: string;
  const sandboxes: Sandbox[] = [];
  beforeAll(async () => {
    source = await mkdtemp(join(tmpdir(), "af-test-reports-"));
    for (const name of Object.keys(PROJECTS)) await writeProject(source, name);
  });
  afterAll(async () => {
    await Promise.all(sandboxes.map((sandbox) => sandbox.dispose()));
    if (source) await rm(source, { recursive: true, force: true });
  });

  async function offline(image: string, name: string, setup?: string): Promise<Sandbox> {
    const sandbox = await sandboxFor(image, name, source);
    sandboxes.push(sandbox);
    if (setup) {
      const installed = await sandbox.exec(setup, { cwd: sandbox.workdir, timeoutMs: 600_000 });
      expect(installed.exitCode, installed.output).toBe(0);
    }
    await sandbox.setNetwork(false);
    return sandbox;
  }

  it.runIf(rich)(
    "pytest writes JUnit XML through PYTEST_ADDOPTS; the report stays out of the change",
    async () => {
      const sandbox = await offline(SANDBOX_RICH_IMAGE, "pytest");
      const result = await run(sandbox, "python3 -B -m pytest -p no:cacheprovider -q");
      expect(result.exitCode).toBe(1);
      expect(result.results?.sources).toEqual(["pytest's JUnit XML"]);
      expect(outcomes(result.results?.tests)).toEqual({
        "tests.test_math::test_adds": "passed",
        "tests.test_math::test_breaks": "failed",
      });
      expect(result.output).toContain("1 failed, 1 passed");
      const status = await sandbox.exec("git status --porcelain", { cwd: sandbox.workdir });
      expect(status.output.trim()).toBe("");
    },
    300_000,
  );

  it.runIf(rich)(
    "go test's package and --- FAIL lines, as it prints them",
    async () => {
      const sandbox = await offline(SANDBOX_RICH_IMAGE, "go");
      const result = await run(sandbox, 'GOCACHE="$PWD/.cache" go test ./...');
      expect(result.results?.sources).toEqual(["go test's output"]);
      expect(outcomes(result.results?.tests)).toEqual({
        "example.com/m/calc": "failed",
        "example.com/m/calc.TestBreaks": "failed",
        "example.com/m/ok": "passed",
      });
    },
    300_000,
  );

  it.runIf(rich)(
    "cargo's libtest lines, by test binary",
    async () => {
      const sandbox = await offline(SANDBOX_RICH_IMAGE, "cargo");
      const result = await run(sandbox, 'CARGO_HOME="$PWD/.cargo" cargo test --offline');
      expect(outcomes(result.results?.tests)).toEqual({
        "unittests src/lib.rs tests::adds": "passed",
        "unittests src/lib.rs tests::breaks": "failed",
      });
    },
    300_000,
  );

  it.runIf(slim)(
    "node:test's TAP on Node 18, through npm test",
    async () => {
      const sandbox = await offline(SANDBOX_IMAGE, "node-test");
      const result = await run(sandbox, "npm test");
      expect(result.results?.sources).toEqual(["TAP output"]);
      expect(outcomes(result.results?.tests)).toEqual({ adds: "passed", breaks: "failed" });
    },
    300_000,
  );

  it.runIf(slim)(
    "Surefire's and Gradle's reports written during the run are read, an older one left from setup is not",
    async () => {
      const sandbox = await offline(SANDBOX_IMAGE, "jvm");
      // The JVM tools are not run here (their plugins come from Maven Central): the command writes what
      // Surefire wrote for a real run (test/fixtures/test-results/), in a module, as `mvn test` would.
      await sandbox.writeFile("module/target/surefire-reports/TEST-ex.CalcTest-Inner.xml.in", SUREFIRE);
      const result = await run(
        sandbox,
        "cp module/target/surefire-reports/TEST-ex.CalcTest-Inner.xml.in 'module/target/surefire-reports/TEST-ex.CalcTest$Inner.xml' && " +
          `mkdir -p build/test-results/test && printf '%s' '<testsuite><testcase classname="ex.G" name="g"/></testsuite>' > build/test-results/test/TEST-ex.G.xml`,
      );
      expect(result.results?.sources).toEqual(["Gradle's JUnit XML", "Maven Surefire's JUnit XML"]);
      expect(outcomes(result.results?.tests)).toEqual({
        "ex.G::g": "passed",
        "module: ex.CalcTest::breaks": "failed",
        "module: ex.CalcTest::adds": "passed",
        "module: ex.CalcTest$Inner::innerPasses": "passed",
      });
    },
    300_000,
  );

  it.runIf(slim)(
    "a report too large or malformed is said and not used; the other results stand",
    async () => {
      const sandbox = await offline(SANDBOX_IMAGE, "node-test");
      // What a hostile test suite can do: write into the report directory it is told about.
      const hostile =
        'head -c 9000000 /dev/zero > "$AGENT_FIX_TEST_REPORTS/pytest.xml"; echo "{" > "$AGENT_FIX_TEST_REPORTS/1-1.jest.json"; ' +
        'echo "<testsuite>" > "$AGENT_FIX_TEST_REPORTS/other.xml"; node --test';
      const result = await run(sandbox, hostile);
      expect(outcomes(result.results?.tests)).toEqual({ adds: "passed", breaks: "failed" });
      expect(result.results?.problems).toEqual([
        expect.stringMatching(/^\.git\/agent-fix-reports\/1-1\.jest\.json was not read: it is not JSON \(/),
        ".git/agent-fix-reports/other.xml was not read: it is not a report agent-fix asked for",
        expect.stringMatching(
          /^\.git\/agent-fix-reports\/pytest\.xml was not read: file too large: .* has 9000000 bytes, the limit is 8388608$/,
        ),
      ]);
    },
    300_000,
  );

  it.runIf(slim)(
    "vitest on Node 18 reports through the preload; the badge's failed download leaves every test passed",
    async () => {
      const sandbox = await offline(SANDBOX_IMAGE, "vitest", "npm install --no-audit --no-fund");
      const result = await run(sandbox, "npm test");
      expect(result.exitCode).not.toBe(0);
      expect(result.results?.sources).toEqual(["vitest's JSON report"]);
      expect(outcomes(result.results?.tests)).toEqual({
        "test/math.test.js": "passed",
        "test/math.test.js > adds": "passed",
        "test/math.test.js > subtracts": "passed",
      });
      // vitest's own output, as without the preload.
      expect(result.output).toMatch(/Tests\s+2 passed \(2\)/);
    },
    600_000,
  );

  it.runIf(rich)(
    "jest on Node 20 reports through the preload, its usual output kept",
    async () => {
      const sandbox = await offline(SANDBOX_RICH_IMAGE, "jest", "npm install --no-audit --no-fund");
      const result = await run(sandbox, "npm test");
      expect(result.exitCode).toBe(1);
      expect(result.results?.sources).toEqual(["jest's JSON report"]);
      expect(outcomes(result.results?.tests)).toEqual({
        "math.test.js": "failed",
        "math.test.js > adds": "passed",
        "math.test.js > group > breaks": "failed",
      });
      expect(result.output).toMatch(/Tests:\s+1 failed, 1 passed, 2 total/);
    },
    600_000,
  );
});
