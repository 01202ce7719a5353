import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalSandboxProvider } from "../../../../../sandbox/local.js";
import type { ExitStatus, Sandbox, Trajectory } from "../../../../../src/shared/contracts.js";
import { RunSandboxes } from "../../../../../worker/run/prepare/run-sandboxes.js";
import { createGate, type GateSetup } from "../../../../../worker/run/solve/gate.js";
import { captureLeftWork } from "../../../../../worker/run/solve/left-work.js";
import { preparedSample } from "../../../../support/prepared-sample.js";
import { submittedTrajectory } from "../../../../support/published.js";

// The unfinished work of a run stopped by a limit, over the local driver: the change read from the
// workspace's files, tested once in a fresh sandbox unless the last gate tested exactly that change.
const SAMPLE = join(import.meta.dirname, "../../../../fixtures/sample-repo");
// Each run prints a nonce of its own: which run's output the work carries tells the runs apart.
const TEST = {
  command: `python3 -m unittest discover -s tests && python3 -c "import uuid; print('run', uuid.uuid4())"`,
  timeoutMs: 60_000,
};
const SECRET = "s3cret-VALUE-of-setup";

const ended = (exitStatus: ExitStatus): Trajectory => {
  const trajectory = submittedTrajectory("stopped");
  trajectory.info.exit_status = exitStatus;
  return trajectory;
};
const nonce = (text: string | null | undefined) => /run ([0-9a-f-]{36})/.exec(text ?? "")?.[1];

describe("unfinished work left by a run stopped on a limit", () => {
  let root: string;
  let sandbox: Sandbox;
  let setup: GateSetup;
  const provider = new LocalSandboxProvider({ warn: () => {} });
  const sandboxes = new RunSandboxes(provider, { jobId: "left-work-test" });

  beforeAll(async () => {
    ({
      root,
      gateSetup: setup,
      sandbox,
    } = await preparedSample(sandboxes, {
      source: SAMPLE,
      test: TEST,
      prefix: "af-left-work-",
    }));
  });
  afterAll(async () => {
    await sandboxes.disposeAll();
    await rm(root, { recursive: true, force: true });
  });

  it("reuses the last gate's run of the same change, tests a changed one afresh, withholds a secret", async () => {
    const gate = createGate(setup, sandbox);
    const signal = new AbortController().signal;
    const capture = (exitStatus: ExitStatus) =>
      captureLeftWork({
        trajectory: ended(exitStatus),
        gate,
        setup,
        workspace: sandbox,
        secrets: { NPM_TOKEN: SECRET },
        signal,
      });
    // No change yet: nothing to show.
    expect(await capture("exit_step_limit")).toBeNull();

    await sandbox.exec("echo '# note' >> textstats/stats.py");
    expect((await gate.gate("")).passed).toBe(true);
    const gateNonce = nonce(gate.lastRun()?.run.output);
    expect(gateNonce).toBeDefined();
    // Exactly what the last gate tested: its run is reused, not repeated (the same nonce).
    const same = await capture("submitted (exit_step_limit)");
    expect(same).toMatchObject({
      exitStatus: "exit_step_limit",
      tests: { kind: "ran", passed: true, exitCode: 0 },
    });
    expect(nonce(same?.tests.kind === "ran" ? same.tests.tail : null)).toBe(gateNonce);
    expect(same?.diff.kind === "shown" && same.diff.patch).toContain("+# note");

    // The agent went on after the gate: the work is tested again, in a fresh sandbox (a new nonce).
    await sandbox.exec(
      "sed -i 's/return ordered\\[middle\\]/return ordered[middle] \\/ 2/' textstats/stats.py",
    );
    const changed = await capture("exit_cost");
    expect(changed?.diff.kind === "shown" && changed.diff.patch).toContain("+    return ordered[middle] / 2");
    expect(changed?.tests).toMatchObject({ kind: "ran", passed: false, exitCode: 1 });
    expect(changed?.tests.kind === "ran" && changed.tests.tail).toMatch(/FAILED \(failures=\d+\)/);

    // A run that ended otherwise keeps nothing; a change holding a setup secret is withheld.
    expect(await capture("submitted")).toBeNull();
    expect(await capture("exit_cancelled")).toBeNull();
    await sandbox.exec(`echo 'token = "${SECRET}"' >> textstats/stats.py`);
    const secret = await capture("exit_context");
    expect(secret?.diff).toEqual({ kind: "withheld", secretNames: ["NPM_TOKEN"] });
  }, 240_000);
});
