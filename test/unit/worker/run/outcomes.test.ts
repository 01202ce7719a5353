import { describe, expect, it } from "vitest";
import type { Trajectory } from "../../../../src/shared/contracts.js";
import { parseRepoConfig } from "../../../../worker/config/repo.js";
import { repositoryPolicySchema } from "../../../../worker/config/repo-policy.js";
import { parseWorkerEnv } from "../../../../worker/config/worker-env.js";
import { decodeAbortReason, encodeAbortReason } from "../../../../worker/jobs/abort-reason.js";
import { toPipelineConfig } from "../../../../worker/run/configure/repo-config.js";
import { runName } from "../../../../worker/run/open/open-run.js";
import { patchPaths } from "../../../../worker/run/solve/gate.js";
import { explainNoPullRequest } from "../../../../worker/run/solve/solve.js";
import { gateTimeLimit } from "../../../../worker/run/tests/test-time-limit.js";

function trajectory(
  exit: string,
  gate: boolean[] = [],
  submission: string | null = null,
  steps = 3,
): Trajectory {
  return {
    trajectory: Array.from({ length: steps }, () => ({}) as Trajectory["trajectory"][number]),
    history: [],
    info: {
      exit_status: exit as Trajectory["info"]["exit_status"],
      submission,
      model_stats: { tokens_sent: 0, tokens_received: 0, api_calls: 0, instance_cost: 0 },
      gate: gate.map((passed, i) => ({ attempt: i + 1, passed, output: "", durationMs: 1 })),
      model: "replay:x",
      config_hash: "",
      tool_bundle: "aci",
      aci_version: "1",
      sandbox_image: "img",
      started_at: "",
      finished_at: null,
    },
  };
}

describe("why no pull request was opened", () => {
  it("says the tests kept failing when the gate never passed", () => {
    expect(
      explainNoPullRequest(trajectory("exit_replay_exhausted", [false, false], "diff"), "npm test"),
    ).toBe(
      "The agent submitted a change 2 time(s) but `npm test` still failed on it, so no pull request was opened.",
    );
  });
  it("says a last run that timed out timed out, with its limit and the baseline's time", () => {
    const limit = gateTimeLimit({ configuredMs: 300_000, ceilingMs: 1_800_000, baselineMs: 54_000 });
    const lastRun = { passed: false, exitCode: 137, timedOut: true, output: "", durationMs: 300_000, limit };
    expect(
      explainNoPullRequest(trajectory("exit_step_limit", [false], "diff"), "go test ./...", lastRun),
    ).toBe(
      "The agent submitted a change 1 time(s) but `go test ./...` still failed on it; its last run timed out: it was stopped after 300 s (the tests took 54 s on the unchanged code, in the baseline on the same machine; the limit is the larger of `test.timeoutSeconds` and 3 × the baseline's time, within the operator's ceiling), so no pull request was opened.",
    );
  });
  it("names the limit that ended the run, or an empty submission", () => {
    expect(explainNoPullRequest(trajectory("exit_step_limit", [], null, 7), "t")).toContain(
      "step limit (7 steps)",
    );
    expect(explainNoPullRequest(trajectory("exit_cost"), "t")).toContain("cost limit");
    expect(explainNoPullRequest(trajectory("submitted", [], ""), "t")).toContain("without changing anything");
  });
});

describe("cancel reasons through BullMQ's string reason", () => {
  it("round-trip, and an unknown reason reads as a cancel by someone", () => {
    const reason = { kind: "shutdown", by: "the worker", reason: "shutdown" } as const;
    expect(decodeAbortReason(encodeAbortReason(reason))).toEqual(reason);
    expect(decodeAbortReason("stop")).toEqual({ kind: "cancelled", by: "someone", reason: "stop" });
  });
});

const rules = {
  defaultMaxSteps: 50,
  policy: repositoryPolicySchema.parse({}),
  model: {
    name: "openai:gpt-4.1",
    prices: { asOf: "2025-08-15", models: { "gpt-4.1": { input: 2, output: 8 } } },
  },
};

describe("repository config as the pipeline uses it", () => {
  it("maps fields, defaults and the tool bundle, and refuses an unknown bundle naming the field", () => {
    const config = toPipelineConfig(
      parseRepoConfig("test:\n  command: make test\nlimits:\n  maxTimeMinutes: 2\ntools: editor\n"),
      rules,
    );
    expect(config).toMatchObject({
      setup: [],
      setupNetwork: true,
      testCommand: "make test",
      testTimeoutMs: 300_000,
      forbiddenPaths: [".github/workflows/**", ".github/agent-fix.yml"],
      openPrWhenBaselineFails: false,
      maxSteps: 50,
      agent: { maxWallTimeSeconds: 120, toolBundle: "editor" },
    });
    expect(() => toPipelineConfig(parseRepoConfig("test:\n  command: x\ntools: magic\n"), rules)).toThrow(
      /`tools`/,
    );
  });
});

describe("worker settings", () => {
  it("requires the app's credentials and validates setup secrets, naming the variable", () => {
    expect(() => parseWorkerEnv({})).toThrow(/APP_ID and PRIVATE_KEY/);
    expect(() => parseWorkerEnv({ APP_ID: "1", PRIVATE_KEY: "k", AGENT_FIX_SETUP_SECRETS: "[1]" })).toThrow(
      /AGENT_FIX_SETUP_SECRETS/,
    );
    expect(() => parseWorkerEnv({ APP_ID: "1", PRIVATE_KEY: "k", AGENT_FIX_SANDBOX: "vm" })).toThrow(
      /AGENT_FIX_SANDBOX/,
    );
    expect(parseWorkerEnv({ APP_ID: "1", PRIVATE_KEY: "k" })).toMatchObject({
      AGENT_FIX_SANDBOX: "docker",
      AGENT_FIX_WORKER_HOST: "127.0.0.1",
    });
  });
  it("names runs safely for file names and links", () => {
    const job = { owner: "my org", repo: "a/b", issueNumber: 3 } as Parameters<typeof runName>[0];
    expect(runName(job, 42)).toBe("my_org-a_b-3-42");
  });
  it("lists the paths of a patch, renames on both sides, without a/ b/", () => {
    const patch =
      "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n" +
      "diff --git a/x.txt b/x.txt\nnew file mode 100644\n--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+x\n";
    expect(patchPaths(patch).sort()).toEqual(["new.py", "old.py", "x.txt"]);
  });
});
