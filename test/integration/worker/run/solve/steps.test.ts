import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalSandboxProvider } from "../../../../../sandbox/local.js";
import type { Sandbox, SandboxCreateOptions } from "../../../../../src/shared/contracts.js";
import { RunSandboxes } from "../../../../../worker/run/prepare/run-sandboxes.js";
import { runSetup } from "../../../../../worker/run/prepare/setup.js";
import { prove, proveTests } from "../../../../../worker/run/prove/prove-tests.js";
import {
  captureChange,
  createGate,
  type GateSetup,
  patchPaths,
} from "../../../../../worker/run/solve/gate.js";
import { runBaseline } from "../../../../../worker/run/tests/test-run.js";
import { preparedSample } from "../../../../support/prepared-sample.js";

// The pipeline's in-sandbox steps over the local driver (the Docker driver runs them in test/e2e).
const SAMPLE = join(import.meta.dirname, "../../../../fixtures/sample-repo");
const TEST = { command: "python3 -m unittest discover -s tests", timeoutMs: 60_000 };
const FIX =
  "diff --git a/textstats/stats.py b/textstats/stats.py\n--- a/textstats/stats.py\n+++ b/textstats/stats.py\n" +
  '@@ -18,4 +18,6 @@ def median(values):\n         raise ValueError("median() of an empty sequence")\n' +
  "     ordered = sorted(values)\n     middle = len(ordered) // 2\n+    if len(ordered) % 2 == 0:\n" +
  "+        return (ordered[middle - 1] + ordered[middle]) / 2\n     return ordered[middle]\n";
const NEW_TEST =
  "diff --git a/tests/test_stats.py b/tests/test_stats.py\n--- a/tests/test_stats.py\n+++ b/tests/test_stats.py\n" +
  "@@ -16,6 +16,9 @@ class MedianTest(unittest.TestCase):\n     def test_odd_length(self):\n" +
  "         self.assertEqual(median([3, 1, 2]), 2)\n \n+    def test_even_length(self):\n" +
  "+        self.assertEqual(median([4, 1, 3, 2]), 2.5)\n+\n     def test_empty(self):\n" +
  "         with self.assertRaises(ValueError):\n             median([])\n";

describe("pipeline steps in a sandbox", () => {
  let root: string;
  let sandbox: Sandbox;
  let gateSetup: GateSetup;
  const provider = new LocalSandboxProvider({ warn: () => {} });
  const sandboxes = new RunSandboxes(provider, { jobId: "steps-test" });

  beforeAll(async () => {
    ({ root, gateSetup, sandbox } = await preparedSample(sandboxes, {
      source: SAMPLE,
      test: TEST,
      prefix: "af-steps-",
    }));
  });
  afterAll(async () => {
    await sandboxes.disposeAll();
    await rm(root, { recursive: true, force: true });
  });

  it("gives setup commands their secrets one command at a time and names a failing command", async () => {
    const secrets = { REGISTRY_TOKEN: "s3cret-value" };
    const ok = await runSetup(sandbox, {
      commands: ['test "$REGISTRY_TOKEN" = s3cret-value', "true"],
      secrets,
      networkWasOn: false,
      timeoutMs: 10_000,
    });
    expect(ok.commands.map((c) => c.exitCode)).toEqual([0, 0]);
    // Nothing persists into the agent's session.
    expect((await sandbox.exec('echo "[$REGISTRY_TOKEN]"')).output.trim()).toBe("[]");
    const error = await runSetup(sandbox, {
      commands: ['echo "using $REGISTRY_TOKEN"; exit 3'],
      secrets,
      networkWasOn: false,
      timeoutMs: 10_000,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "setup_failed", fault: "repository" });
    expect((error as Error).message).toContain("exited 3");
    expect((error as Error).message).toContain("using ***");
    expect((error as Error).message).not.toContain("s3cret-value");
  });

  it("runs the baseline, fails the gate on the buggy code's new test, passes it on the fix", async () => {
    const baseline = await runBaseline(sandbox, TEST);
    expect(baseline.passed).toBe(true);
    const runs: boolean[] = [];
    const { gate } = createGate(gateSetup, sandbox, (run) => runs.push(run.passed));

    await sandbox.writeFile("patch.diff", NEW_TEST);
    expect((await sandbox.exec("git apply patch.diff && rm patch.diff")).exitCode).toBe(0);
    // What the agent says it submitted is ignored: the gate reads the workspace's files itself.
    const failing = await gate("made-up diff");
    expect(failing.passed).toBe(false);
    expect(failing.output).toContain("failed (exit 1)");
    expect(failing.output).toContain("test_even_length");
    expect(patchPaths(failing.submission ?? "")).toEqual(["tests/test_stats.py"]);
    expect(failing.submission).toContain("+    def test_even_length(self):");

    await sandbox.writeFile("patch.diff", FIX);
    expect((await sandbox.exec("git apply patch.diff && rm patch.diff")).exitCode).toBe(0);
    const passing = await gate("");
    expect(passing).toMatchObject({ passed: true });
    expect(patchPaths(passing.submission ?? "")).toEqual(["tests/test_stats.py", "textstats/stats.py"]);
    expect(runs).toEqual([false, true]);
    // The baseline ran in this workspace and left byte code there, which no submission holds.
    expect((await sandbox.exec("find . -name '*.pyc' | wc -l")).output.trim()).not.toBe("0");
  });

  it("proves the new test fails without the fix, in a fresh sandbox with only the test file applied", async () => {
    const proof = await proveTests(gateSetup, await captureChange(gateSetup, sandbox));
    expect(proof.testFiles).toEqual(["tests/test_stats.py"]);
    expect(proof.before?.passed).toBe(false);
    expect(proof.before?.output).toContain("test_even_length");
    // The workspace keeps the whole change.
    expect((await sandbox.readFile("textstats/stats.py")).toString()).toContain("% 2 == 0");
  });
});

describe("the proof of a new test file whose name git quotes", () => {
  // Each test file run as a script, so a file named `tests/test_ "odd".py` (which unittest's
  // discovery skips) runs too; absent, it cannot fail.
  const EACH_FILE = {
    command: 'for f in tests/*.py; do PYTHONPATH=. python3 "$f" || exit 1; done',
    timeoutMs: 60_000,
  };
  const ODD_NAME = 'tests/test_ "odd".py';
  const ODD_TEST =
    "import unittest\n\nfrom textstats.stats import median\n\n\nclass Odd(unittest.TestCase):\n" +
    "    def test_even_length(self):\n        self.assertEqual(median([4, 1, 3, 2]), 2.5)\n\n\n" +
    'if __name__ == "__main__":\n    unittest.main()\n';
  let root: string;
  let sandbox: Sandbox;
  let gateSetup: GateSetup;
  const sandboxes = new RunSandboxes(new LocalSandboxProvider({ warn: () => {} }), { jobId: "odd-name" });

  beforeAll(async () => {
    ({ root, gateSetup, sandbox } = await preparedSample(sandboxes, {
      source: SAMPLE,
      test: EACH_FILE,
      prefix: "af-odd-",
    }));
  });
  afterAll(async () => {
    await sandboxes.disposeAll();
    await rm(root, { recursive: true, force: true });
  });

  it("applies exactly that file to the unchanged code, where it fails", async () => {
    await sandbox.writeFile(ODD_NAME, ODD_TEST);
    await sandbox.writeFile("patch.diff", FIX);
    expect((await sandbox.exec("git apply patch.diff && rm patch.diff")).exitCode).toBe(0);
    const change = await captureChange(gateSetup, sandbox);
    // git quotes the name in the patch's headers: `+++ "b/tests/test_ \"odd\".py"`.
    expect(change.patch).toContain('"b/tests/test_ \\"odd\\".py"');
    const proof = await proveTests(gateSetup, change);
    expect(proof.testFiles).toEqual([ODD_NAME]);
    expect(proof.before?.passed).toBe(false);
    expect(proof.before?.output).toContain("test_even_length");
  });

  it("refuses a change past the operator's patch size or file count untested, telling the agent which", async () => {
    const intake = { workspaceBytes: 2 ** 30, workspaceFiles: 10_000, changeFiles: 3, changeBytes: 4096 };
    const gate = createGate({ ...gateSetup, intake }, sandbox).gate;
    await sandbox.exec("head -c 6000 /dev/urandom | base64 > blob.txt");
    const large = await gate("", undefined);
    expect(large).toMatchObject({ passed: false, untested: true });
    expect(large.output).toMatch(
      /the change is \d+(\.\d)? KiB as a patch, more than 4 KiB \(AGENT_FIX_CHANGE_MAX_BYTES\)/,
    );
    await sandbox.exec("rm blob.txt && mkdir -p gen && touch gen/a gen/b gen/c gen/d");
    const many = await gate("", undefined);
    expect(many).toMatchObject({ passed: false, untested: true });
    expect(many.output).toMatch(
      /the change touches \d+ files, more than 3 \(AGENT_FIX_CHANGE_MAX_FILES\); most are under gen\/ \(4\)/,
    );
    await sandbox.exec("rm -r gen");
  });
});

/** The local driver, noting every command its sandboxes run, in order. */
class NotedCommands extends LocalSandboxProvider {
  readonly noted: string[] = [];
  override async create(options: SandboxCreateOptions): Promise<Sandbox> {
    const sandbox = await super.create(options);
    const exec = sandbox.exec.bind(sandbox);
    sandbox.exec = (command, execOptions) => {
      this.noted.push(command);
      return exec(command, execOptions);
    };
    return sandbox;
  }
}

describe("the proof begun beside the gate", () => {
  let root: string;
  let sandbox: Sandbox;
  let gateSetup: GateSetup;
  const provider = new NotedCommands({ warn: () => {} });
  const sandboxes = new RunSandboxes(provider, { jobId: "beside" });

  beforeAll(async () => {
    ({ root, gateSetup, sandbox } = await preparedSample(sandboxes, {
      source: SAMPLE,
      test: TEST,
      prefix: "af-beside-",
    }));
  });
  afterAll(async () => {
    await sandboxes.disposeAll();
    await rm(root, { recursive: true, force: true });
  });

  it("stops a failing gate's proof, and hands over the passing gate's: the proof a later run gives", async () => {
    const signals: AbortSignal[] = [];
    const gate = createGate(gateSetup, sandbox, undefined, (change, signal) => {
      signals.push(signal);
      provider.noted.push("(the proof begins)");
      return proveTests(gateSetup, change, undefined, signal);
    });
    await sandbox.writeFile("patch.diff", NEW_TEST);
    expect((await sandbox.exec("git apply patch.diff && rm patch.diff")).exitCode).toBe(0);
    expect((await gate.gate("")).passed).toBe(false);
    expect(signals[0]?.aborted).toBe(true);
    expect(gate.alongsideOf(gate.lastTested()!)).toBeNull();

    await sandbox.writeFile("patch.diff", FIX);
    expect((await sandbox.exec("git apply patch.diff && rm patch.diff")).exitCode).toBe(0);
    expect((await gate.gate("")).passed).toBe(true);
    const change = gate.lastTested()!;
    expect(signals[1]?.aborted).toBe(false);
    // The proof began once the gate's change was in the gate's sandbox, not beside its applying.
    const applies = provider.noted.flatMap((command, i) =>
      command.startsWith("git apply --binary") ? [i] : [],
    );
    const begins = provider.noted.flatMap((command, i) => (command === "(the proof begins)" ? [i] : []));
    expect(begins).toHaveLength(2);
    expect(applies[0]).toBeLessThan(begins[0]!);
    const begun = gate.alongsideOf(change);
    expect(begun).not.toBeNull();
    const proved = await prove(gateSetup, change, undefined, new AbortController().signal, begun);
    expect(proved.proof).toBe(await begun);
    expect(proved.proof.testFiles).toEqual(["tests/test_stats.py"]);
    expect(proved.proof.before?.passed).toBe(false);
    expect(proved.proof.before?.output).toContain("test_even_length");
    const after = await proveTests(gateSetup, change);
    expect({ files: after.testFiles, passed: after.before?.passed }).toEqual({
      files: proved.proof.testFiles,
      passed: proved.proof.before?.passed,
    });

    // The run ends without publishing: the proof is stopped and handed to no one.
    gate.stopAlongside();
    expect(signals[1]?.aborted).toBe(true);
    expect(gate.alongsideOf(change)).toBeNull();
  });
});
