/**
 * The edit guardrails a weaker model needs (issue 16), replayed through the agent loop over the real ACI:
 * Python's own parser refuses what Python rejects (a missing colon, a missing or inconsistent indent)
 * in its own words at the edited line; an `end_of_edit` line copied into a function call's argument is
 * dropped and said; an accepted edit shows the lines it removed and warns when code became a comment.
 * The same mistakes in the text syntax give the same observations; the editor bundle's str_replace and
 * insert go through the same gate and show the same diff. Golden observations: replays/*.golden.
 */
import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { Sandbox, Trajectory } from "../../../../src/shared/contracts.js";
import { replay, runEpisode } from "./harness.js";

const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.dispose()));
});

const separator = "\n##### next observation #####\n";

async function golden(name: string): Promise<string[]> {
  return (await readFile(replay(name), "utf8")).replace(/\n$/, "").split(separator);
}

/** The observations of the steps the golden file covers (the edits; submitting is not pinned here). */
function observations(trajectory: Trajectory, sandbox: Sandbox, count: number): string[] {
  return trajectory.trajectory
    .slice(0, count)
    .map((step) => step.observation.replaceAll(sandbox.workdir, "$ROOT"));
}

const fixed = [
  "def mean(values):",
  '    """Return the arithmetic mean of values; 0 for an empty list."""',
  "    if not values:",
  "        return 0",
  "    return sum(values) / len(values)",
  "",
  "",
  "def clamp(value, low, high):",
  '    """Limit value to the range [low, high]."""',
  "    return max(low, min(value, high))",
  "",
].join("\n");

describe("edit guardrails, replayed (aci bundle)", () => {
  it.each([
    { format: "function_calling", model: "guardrails.jsonl" },
    { format: "thought_action", model: "guardrails-text.jsonl" },
  ])(
    "$format: Python's own errors at the edit, the end marker dropped, removed lines shown",
    async ({ format, model }) => {
      const { trajectory, sandbox } = await runEpisode({
        model,
        agent: { actionFormat: format },
        cleanup: sandboxes,
      });
      const expected = await golden("guardrails.golden");
      expect(observations(trajectory, sandbox, expected.length)).toEqual(expected);
      expect(trajectory.info.exit_status).toBe("submitted");
      expect((await sandbox.readFile("calc/ops.py")).toString()).toBe(fixed);
    },
  );
});

describe("edit guardrails, replayed (editor bundle)", () => {
  it("str_replace and insert get Python's check and the same diff and warning", async () => {
    const { trajectory, sandbox } = await runEpisode({
      model: "guardrails-editor.jsonl",
      aci: { bundle: "editor" },
      cleanup: sandboxes,
    });
    const expected = await golden("guardrails-editor.golden");
    expect(observations(trajectory, sandbox, expected.length)).toEqual(expected);
    expect(trajectory.info.exit_status).toBe("submitted");
    expect((await sandbox.readFile("calc/ops.py")).toString()).toBe(fixed);
  });
});
