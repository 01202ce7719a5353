import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalSandboxProvider } from "../../../../../sandbox/local.js";
import type { Sandbox } from "../../../../../src/shared/contracts.js";
import { loadConfig } from "../../../../../worker/agent/config-file.js";
import { RunSandboxes } from "../../../../../worker/run/prepare/run-sandboxes.js";
import { proveTests } from "../../../../../worker/run/prove/prove-tests.js";
import { gatePassed } from "../../../../../worker/run/solve/agent-run-input.js";
import { createAgentRunner } from "../../../../../worker/run/solve/agent-runner.js";
import { createGate, type GateSetup } from "../../../../../worker/run/solve/gate.js";
import { preparedSample } from "../../../../support/prepared-sample.js";

// The demo's recorded trajectory, through the real ACI and agent loop, on the sample repository.
const FIXTURES = join(import.meta.dirname, "../../../../fixtures");
const TEST = { command: "python3 -m unittest discover -s tests", timeoutMs: 60_000 };

describe("the sample repository's replay trajectory", () => {
  let root: string;
  let sandbox: Sandbox;
  let gateSetup: GateSetup;
  const sandboxes = new RunSandboxes(new LocalSandboxProvider({ warn: () => {} }), { jobId: "replay-test" });

  beforeAll(async () => {
    ({ root, gateSetup, sandbox } = await preparedSample(sandboxes, {
      source: join(FIXTURES, "sample-repo"),
      test: TEST,
      prefix: "af-replay-",
    }));
  });
  afterAll(async () => {
    await sandboxes.disposeAll();
    await rm(root, { recursive: true, force: true });
  });

  it("fixes median, adds a test that fails without the fix, and passes the gate", async () => {
    const operator = await loadConfig();
    const runAgent = await createAgentRunner(
      {
        operator,
        modelOverride: `replay:${join(FIXTURES, "replay", "sample-median.jsonl")}`,
        trajectoryDir: root,
      },
      { maxSteps: 20, testCommand: TEST.command },
      "replay-job",
    );
    const steps: number[] = [];
    const gate = createGate(gateSetup, sandbox);
    const trajectory = await runAgent({
      sandbox,
      issue: {
        number: 1,
        title: "median() is wrong for an even number of values",
        body: "median([1, 2, 3, 4]) returns 3.",
      },
      repoName: "octo/textstats",
      gate: gate.gate,
      onStep: ({ step }) => steps.push(step),
      signal: new AbortController().signal,
    });
    expect(trajectory.info.exit_status).toBe("submitted");
    // The model is told the command the gate will run (issue 12).
    expect(trajectory.history[1]!.content).toContain(`Your change will be checked with: \`${TEST.command}\``);
    expect(gatePassed(trajectory)).toBe(true);
    expect(trajectory.info.submission).toContain(
      "+        return (ordered[middle - 1] + ordered[middle]) / 2",
    );
    expect(trajectory.info.submission).toContain("+    def test_even_length(self):");
    expect(steps.at(-1)).toBe(trajectory.trajectory.length);
    // Written to disk as JOB.traj, SWE-agent field names.
    const saved = JSON.parse(await readFile(join(root, "replay-job.traj"), "utf8"));
    expect(saved.info.exit_status).toBe("submitted");

    expect(gate.lastTested()?.patch).toBe(trajectory.info.submission);
    const proof = await proveTests(gateSetup, gate.lastTested()!);
    expect(proof.testFiles).toEqual(["tests/test_stats.py"]);
    expect(proof.before?.passed).toBe(false);
  });
});
