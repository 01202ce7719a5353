/** A finished run's record as the publishing step receives it (trajectory, tests, the draft). */
import type { Trajectory } from "../../src/shared/contracts.js";
import type { PullRequestDraft } from "../../worker/run/publish/github-publisher.js";

/** A submitted trajectory of one step whose submit gave `description` (the agent's account of its change). */
export function submittedTrajectory(description: string): Trajectory {
  return {
    trajectory: [
      {
        // The model gave its account as the description, as it is asked to; its thought is not it.
        thought: "Confirm the submission.",
        action: "submit",
        observation: "submitted",
        response: "",
        execution_time: 0.5,
        state: { open_file: "n/a", working_dir: "/workspace" },
        tool: "submit",
        args: { description },
        tokens: { sent: 10, received: 5 },
      },
    ],
    history: [],
    info: {
      exit_status: "submitted",
      submission: "diff --git a/a.txt b/a.txt\n",
      model_stats: { tokens_sent: 10, tokens_received: 5, api_calls: 1, instance_cost: 0.01 },
      gate: [{ attempt: 1, passed: true, output: "", durationMs: 1 }],
      model: "replay:test",
      config_hash: "h",
      tool_bundle: "default",
      aci_version: "1",
      sandbox_image: "img",
      started_at: "2026-12-01T10:00:00.000Z",
      finished_at: "2026-12-01T10:01:00.000Z",
      description,
    },
  };
}

export function draftOf(trajectory: Trajectory, branch = "agent-fix/issue-1"): PullRequestDraft {
  const passed = { passed: true, exitCode: 0, timedOut: false, output: "", durationMs: 1 };
  return {
    issueNumber: 1,
    testCommand: "make test",
    branch,
    base: "main",
    title: "Fix the thing",
    trajectory,
    baseline: passed,
    proof: { testFiles: [], before: null },
  };
}
