/**
 * Honest submits (issue 16), replayed in both action formats against golden observations: a submit
 * with no change says so and keeps the review for the first submit that has a change, a run never ends
 * as submitted with an empty patch, and a failing gate answers with identical failures grouped, worded
 * as not accepted yet. Both formats must produce the same observations, the ones in the golden file, but
 * for the one sentence saying how each gives the pull request's description (marked in the file).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Sandbox, Trajectory } from "../../../../src/shared/contracts.js";
import { fixtures, runEpisode, unittestGate } from "./harness.js";

const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.dispose()));
});

const formats = [
  { actionFormat: "function_calling", suffix: "" },
  { actionFormat: "thought_action", suffix: "-text" },
] as const;

/** The one sentence of the review that says how the action format gives the pull request's description. */
const DESCRIPTION_WHERE = {
  function_calling: "Give it in submit's `description` argument.",
  thought_action:
    "Write it as the text of your reply before the submit command: that text is published as it is, so write nothing else there.",
} as const;

/**
 * The observations of the submits (the other tools' are other tests' business), without what differs
 * between machines: the sandbox's directory and test timings; and with the sentence that differs between
 * the formats by design checked, then marked.
 */
function observations(
  trajectory: Trajectory,
  sandbox: Sandbox,
  format: keyof typeof DESCRIPTION_WHERE,
): (string | null)[] {
  return trajectory.trajectory.map((step) => {
    if (step.tool !== "submit") return null;
    const other = DESCRIPTION_WHERE[format === "function_calling" ? "thought_action" : "function_calling"];
    expect(step.observation).not.toContain(other);
    return step.observation
      .split(sandbox.workdir)
      .join("/workspace")
      .replace(/^Ran (\d+) tests? in [\d.]+s$/gm, "Ran $1 tests in 0.000s")
      .replace(DESCRIPTION_WHERE[format], "<how the action format gives the description>");
  });
}

/** The golden observations of a scenario; UPDATE_GOLDEN=1 writes them from the run instead. */
async function expectGolden(name: string, actual: (string | null)[]): Promise<void> {
  const file = join(fixtures, "replays", "golden", `${name}.json`);
  if (process.env.UPDATE_GOLDEN === "1") await writeFile(file, `${JSON.stringify(actual, null, 2)}\n`);
  expect(actual).toEqual(JSON.parse(await readFile(file, "utf8")) as (string | null)[]);
}

for (const { actionFormat, suffix } of formats) {
  describe(`submit (${actionFormat})`, () => {
    it("a submit with no change says nothing has changed and keeps the review for the first real one", async () => {
      const { trajectory, sandbox } = await runEpisode({
        model: `empty-submit${suffix}.jsonl`,
        agent: { actionFormat },
        cleanup: sandboxes,
      });
      expect(trajectory.trajectory[0]!.observation).toMatch(/^Nothing was submitted \(no changes/);
      expect(trajectory.trajectory[3]!.observation).toContain("Did you run the repository's relevant tests");
      expect(trajectory.info.exit_status).toBe("submitted");
      expect(trajectory.info.submission).toContain("+        return 0");
      await expectGolden("empty-submit", observations(trajectory, sandbox, actionFormat));
    });

    it("with the review off, an empty submit does not end the run, and the run never ends as submitted", async () => {
      const { trajectory } = await runEpisode({
        model: `empty-submit${suffix}.jsonl`,
        agent: { actionFormat, reviewOnSubmit: false, limits: { maxSteps: 1 } },
        cleanup: sandboxes,
      });
      expect(trajectory.trajectory).toHaveLength(1);
      expect(trajectory.info.exit_status).toBe("exit_step_limit");
      expect(trajectory.info.submission).toBeNull();
    });

    it("a failing gate groups identical failures and says the change is not accepted yet", async () => {
      const { trajectory, sandbox } = await runEpisode({
        model: `gate-grouped${suffix}.jsonl`,
        agent: { actionFormat, reviewOnSubmit: false },
        gate: unittestGate,
        cleanup: sandboxes,
      });
      expect(trajectory.info.gate.map((record) => record.passed)).toEqual([false, true]);
      const feedback = trajectory.trajectory[3]!.observation;
      expect(feedback).toMatch(/^Your change was not accepted yet: .* \(attempt 1 of 3\)/);
      expect(feedback).toContain("13 errors, all UnboundLocalError at ops.py:5, e.g. test_empty_00");
      expect(feedback).not.toContain("Your change was submitted");
      expect(feedback.match(/^Traceback/gm)).toHaveLength(1);
      expect(trajectory.info.exit_status).toBe("submitted");
      await expectGolden("gate-grouped", observations(trajectory, sandbox, actionFormat));
    });
  });
}
