import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Model, Sandbox, Trajectory } from "../../../../src/shared/contracts.js";
import { ReplayModel } from "../../../../worker/model/replay.js";
import { replay, runEpisode, unittestGate } from "./harness.js";

// Disposed together at the end: a local sandbox takes seconds to dispose, and they are independent.
const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.dispose()));
});

const fileText = async (sandbox: Sandbox) => (await sandbox.readFile("calc/ops.py")).toString("utf8");

describe("the agent loop with the replay model, the real ACI and the local sandbox", () => {
  it("submits a correct fix after the review, and saves a complete trajectory", async () => {
    const steps: number[] = [];
    const { trajectory, sandbox, saved } = await runEpisode({
      model: "fix.jsonl",
      cleanup: sandboxes,
      onStep: () => (event) => {
        steps.push(event.step);
        expect(event.maxSteps).toBe(50);
      },
    });
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.submission).toContain("+    if not values:");
    expect(trajectory.info.submission).toContain("diff --git a/calc/ops.py b/calc/ops.py");
    expect(await fileText(sandbox)).toContain("return 0");
    expect(steps).toEqual([1, 2, 3, 4, 5]);
    const [open, edit, bash, review] = trajectory.trajectory;
    expect(open!.action).toBe("open calc/ops.py");
    expect(open!.observation).toContain("[File: calc/ops.py (8 lines total)]");
    expect(edit!.state.open_file).toBe("calc/ops.py");
    expect(bash!.observation).toContain("OK");
    expect(review!.observation).toContain("Did you run the repository's relevant tests");
    expect(review!.observation).toContain("+    if not values:");
    const onDisk = await saved();
    expect(onDisk.info).toMatchObject({
      exit_status: "submitted",
      model_stats: { api_calls: 5, instance_cost: 0 },
      tool_bundle: "aci",
      sandbox_image: sandbox.image,
    });
    expect(onDisk.info.model).toMatch(/^replay:.*fix\.jsonl$/);
    expect(onDisk.info.finished_at).not.toBeNull();
    expect(onDisk.info.config_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(onDisk.trajectory).toHaveLength(5);
    expect(onDisk.history[0]!.role).toBe("system");
    expect(onDisk.history[1]!.content).toContain("mean() crashes on an empty list");
    expect(onDisk.history[1]!.content).not.toContain("template: please describe");
    // No test command was given: the one the repository's layout suggests is named (issue 12).
    expect(onDisk.history[1]!.content).toContain(
      "No test command is configured; the repository's files suggest `python3 -m unittest discover -s tests -t .` (run from the repository root).",
    );
  });

  it("names the gate's test command in the instance prompt", async () => {
    const { trajectory } = await runEpisode({
      model: "fix.jsonl",
      cleanup: sandboxes,
      testCommand: "python3 -m unittest -q",
    });
    expect(trajectory.history[1]!.content).toContain(
      "Your change will be checked with: `python3 -m unittest -q` (run from the repository root). Run it yourself before you submit.",
    );
  });

  it("records a failing progress callback without ending the run", async () => {
    const { trajectory } = await runEpisode({
      model: "fix.jsonl",
      cleanup: sandboxes,
      onStep: () => (event) => {
        if (event.step === 1) throw new Error("status comment failed");
      },
    });
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.on_step_error).toBe("status comment failed");
  });

  it("runs the same fix in thought_action format", async () => {
    const demonstrationFile = fileURLToPath(
      new URL("../../../../config/demonstrations/calc-mean.traj", import.meta.url),
    );
    const { trajectory } = await runEpisode({
      model: "fix-text.jsonl",
      agent: { actionFormat: "thought_action", demonstrationFile },
      cleanup: sandboxes,
    });
    expect(trajectory.history[1]!.content).toContain("--- DEMONSTRATION ---");
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.submission).toContain("+        return 0");
    expect(trajectory.trajectory[1]!.action).toBe(
      "edit 3:3\n    if not values:\n        return 0\n    return sum(values) / len(values)\nend_of_edit",
    );
    expect(trajectory.trajectory[2]!.tool).toBe("bash");
    expect(trajectory.history[0]!.content).toContain("edit <start_line>:<end_line>");
  });

  it("shows a lint-rejected edit, leaves the file unchanged, and takes the corrected edit", async () => {
    const { trajectory } = await runEpisode({ model: "lint-then-fix.jsonl", cleanup: sandboxes });
    const rejected = trajectory.trajectory[1]!;
    expect(rejected.observation).toContain("Your proposed edit has introduced new syntax error(s)");
    expect(rejected.observation).toContain("Your changes have NOT been applied");
    expect(trajectory.trajectory[2]!.observation).toContain("File updated");
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.submission).toContain("+    if not values:");
  });

  it("answers format errors with the valid form, then drops them from the history once the model recovers", async () => {
    const { trajectory } = await runEpisode({ model: "format-errors-recovered.json", cleanup: sandboxes });
    const [noCall, badJson] = trajectory.trajectory;
    expect(noCall!.observation).toContain("your reply called no function");
    expect(noCall!.observation).toContain("Call exactly one of these functions");
    expect(badJson!.observation).toContain("the arguments of open are not valid JSON");
    expect(badJson!.observation).toContain("open takes {path: string");
    expect(trajectory.info.exit_status).toBe("submitted");
    const history = JSON.stringify(trajectory.history);
    expect(history).not.toContain("could not be run");
    expect(history).not.toContain("bad_1");
    expect(trajectory.trajectory).toHaveLength(6);
  });

  it("ends with exit_format after three format errors in a row (no tool, unknown tool, bad argument)", async () => {
    const { trajectory } = await runEpisode({ model: "format-errors-exit.jsonl", cleanup: sandboxes });
    expect(trajectory.info.exit_status).toBe("exit_format");
    expect(trajectory.trajectory[1]!.observation).toContain('Unknown tool "open_file"');
    expect(trajectory.trajectory[2]!.observation).toContain("line_number");
    expect(trajectory.info.submission).toBeNull();
  });

  it("runs only the first of several calls and says the rest were ignored", async () => {
    const { trajectory } = await runEpisode({ model: "multiple-calls.jsonl", cleanup: sandboxes });
    expect(trajectory.trajectory[0]!.tool).toBe("open");
    expect(trajectory.trajectory[0]!.observation).toContain(
      "1 more function call(s); only the first was run",
    );
    const assistant = trajectory.history.find((message) => message.role === "assistant");
    expect(assistant?.role === "assistant" && assistant.tool_calls).toHaveLength(1);
    expect(trajectory.trajectory[1]!.observation).toContain("(no changes");
  });
});

describe("limits end the run with their own status and keep the diff", () => {
  it("step limit", async () => {
    const { trajectory, saved } = await runEpisode({
      model: "edit-then-browse.jsonl",
      agent: { limits: { maxSteps: 3 } },
      cleanup: sandboxes,
    });
    expect(trajectory.info.exit_status).toBe("submitted (exit_step_limit)");
    expect(trajectory.info.submission).toContain("+    if not values:");
    expect(trajectory.trajectory).toHaveLength(3);
    expect((await saved()).info.exit_status).toBe("submitted (exit_step_limit)");
  });

  it("wall time (checked before the next model call, after a command that slept past it)", async () => {
    // A quick edit (sed, no syntax check), then a 4 s sleep that outlasts the 2 s limit.
    const { trajectory } = await runEpisode({
      model: "sed-then-sleep.jsonl",
      agent: { limits: { maxWallTimeSeconds: 2 } },
      cleanup: sandboxes,
    });
    expect(trajectory.info.exit_status).toBe("submitted (exit_time)");
    expect(trajectory.trajectory).toHaveLength(2);
    expect(trajectory.trajectory.at(-1)!.observation).toContain("slept");
    expect(trajectory.info.submission).toContain("+        return 0");
  });

  it("context tokens (estimated as the replay model does), before any call and after an edit", async () => {
    const none = await runEpisode({
      model: "fix.jsonl",
      agent: { limits: { maxContextTokens: 100 } },
      cleanup: sandboxes,
    });
    expect(none.trajectory.info.exit_status).toBe("exit_context");
    expect(none.trajectory.info.submission).toBeNull();
    expect(none.trajectory.info.model_stats.api_calls).toBe(0);
    // The replay model reports the same estimate the limit uses: stop right before the third request.
    const free = await runEpisode({ model: "edit-then-browse.jsonl", cleanup: sandboxes });
    const third = free.trajectory.trajectory[2]!.tokens.sent;
    const { trajectory } = await runEpisode({
      model: "edit-then-browse.jsonl",
      agent: { limits: { maxContextTokens: third - 1 } },
      cleanup: sandboxes,
    });
    expect(trajectory.info.exit_status).toBe("submitted (exit_context)");
    expect(trajectory.trajectory).toHaveLength(2);
    expect(trajectory.info.submission).toContain("+    if not values:");
  });

  it("a replay file that runs out ends with exit_replay_exhausted, the diff kept", async () => {
    const { trajectory } = await runEpisode({ model: "edit-then-browse.jsonl", cleanup: sandboxes });
    expect(trajectory.info.exit_status).toBe("submitted (exit_replay_exhausted)");
    expect(trajectory.trajectory).toHaveLength(6);
  });
});

describe("gate, cancellation and crashes", () => {
  it("a failing gate sends its output back; the model fixes it and the gate passes", async () => {
    const { trajectory } = await runEpisode({
      model: "gate-fails-once.jsonl",
      agent: { reviewOnSubmit: false },
      gate: unittestGate,
      cleanup: sandboxes,
    });
    expect(trajectory.info.gate.map((record) => record.passed)).toEqual([false, true]);
    // Each gate run is tied to the submit that caused it (the dashboard shows its output there).
    expect(trajectory.trajectory.map((step) => step.gate_attempt)).toEqual([
      undefined,
      undefined,
      1,
      undefined,
      2,
    ]);
    const failed = trajectory.trajectory[2]!;
    expect(failed.observation).toContain("the repository's tests failed on it (attempt 1 of 3)");
    expect(failed.observation).toContain("AssertionError: None != 0");
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.submission).toContain("+        return 0");
  });

  it("cancellation stops a running command and ends with exit_cancelled", async () => {
    const controller = new AbortController();
    const replayModel = await ReplayModel.fromFile(replay("long-command.jsonl"));
    // The real replay model; the signal is aborted 300 ms after the model hands over `sleep 30; echo finished`.
    const model: Model = {
      name: replayModel.name,
      query: async (...args) => {
        const response = await replayModel.query(...args);
        setTimeout(() => controller.abort(new Error("cancelled by test")), 300);
        return response;
      },
    };
    const { trajectory, saved } = await runEpisode({ model, signal: controller.signal, cleanup: sandboxes });
    expect(trajectory.info.exit_status).toBe("exit_cancelled");
    expect(trajectory.trajectory).toHaveLength(1);
    expect(trajectory.trajectory[0]!.observation).not.toContain("finished");
    expect(replayModel.remaining).toBe(1);
    expect((await saved()).info.exit_status).toBe("exit_cancelled");
  });

  it("a crash mid-run (the sandbox gone) rejects and leaves a readable trajectory up to the crash", async () => {
    let trajectoryPath = "";
    const error = await runEpisode({
      model: "crash.jsonl",
      cleanup: sandboxes,
      onStep: (sandbox) => async (event) => {
        if (event.step === 2) await sandbox.dispose();
      },
      onPath: (path) => {
        trajectoryPath = path;
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const onDisk = JSON.parse(await readFile(trajectoryPath, "utf8")) as Trajectory;
    expect(onDisk.info.exit_status).toBe("exit_error");
    expect(onDisk.info.error).toBe((error as Error).message);
    expect(onDisk.trajectory.map((step) => step.tool)).toEqual(["open", "edit"]);
    expect(onDisk.info.finished_at).not.toBeNull();
  });
});
