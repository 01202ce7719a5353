/**
 * `agent-fix eval` end to end: the CLI as a child process, real Docker sandboxes, the replay model, and
 * three instances of the fixture repository test/fixtures/eval/repo. One is resolved, one breaks a
 * PASS_TO_PASS test while fixing FAIL_TO_PASS, one never submits; grading must call each one right, and
 * a second invocation must run only what is not finished.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  resultOf as byId,
  FIXTURE_F2P as F2P,
  evalFixtures as fixtures,
  FIXTURE_P2P as P2P,
  readEvalResults as readResults,
  cli as runCli,
  writeFixtureInstances,
} from "../support/eval-repo.js";
import { requireSandboxImage } from "../support/services.js";

const ready = await requireSandboxImage();
const cli = (...args: string[]) => runCli(args);

describe.runIf(ready)("agent-fix eval on fixture instances with a replay model", { timeout: 900_000 }, () => {
  let out: string;
  let instancesFile: string;
  let first: { code: number; stdout: string; stderr: string };
  const evalArgs = () => [
    "eval",
    instancesFile,
    ...["--model", `replay:${join(fixtures, "replays")}`, "--workers", "3", "--out", out],
  ];

  beforeAll(async () => {
    instancesFile = await writeFixtureInstances(
      ["fix-mean", "break-clamp", "no-submit"],
      (dir) => join(dir, "..", `${dir.split("/").pop()}-instances.jsonl`),
      // SWE-bench's dataset holds the lists as JSON text.
      (instance) => ({ ...instance, FAIL_TO_PASS: JSON.stringify(instance.FAIL_TO_PASS) }),
    );
    out = await mkdtemp(join(tmpdir(), "eval-out-"));
    first = await cli(...evalArgs());
  }, 900_000);

  it("grades each instance as SWE-bench would and writes results, predictions and the report", async () => {
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("3 instance(s) x 1 variant(s), 0 already finished, 3 to run, 3 at once");
    expect(first.stdout).toMatch(/\[\d\/3\] default fix-mean: resolved \(submitted\)/);

    const results = await readResults(out);
    expect(results).toHaveLength(3);
    const fixed = byId(results, "fix-mean");
    expect(fixed).toMatchObject({
      resolved: true,
      exit_status: "submitted",
      baseline_passed: true,
      steps: 5,
    });
    expect(fixed.grade).toEqual({
      resolved: true,
      FAIL_TO_PASS: { passed: [F2P], failed: [] },
      PASS_TO_PASS: { passed: P2P, failed: [] },
    });
    expect(fixed.patch).toContain("+    if not values:");
    expect(fixed.no_pull_request_reason).toBeNull();

    const broken = byId(results, "break-clamp");
    expect(broken.resolved).toBe(false);
    expect(broken.patch).toContain("+    return max(low, value)");
    expect(broken.grade).toEqual({
      resolved: false,
      FAIL_TO_PASS: { passed: [F2P], failed: [] },
      PASS_TO_PASS: {
        passed: ["tests.test_ops.OpsTest.test_mean"],
        failed: ["tests.test_ops.OpsTest.test_clamp"],
      },
    });
    // The gate caught it too, and the replay ended before a second attempt.
    expect(broken.exit_status).toBe("submitted (exit_replay_exhausted)");

    const silent = byId(results, "no-submit");
    expect(silent).toMatchObject({
      resolved: false,
      exit_status: "exit_replay_exhausted",
      patch: "",
      steps: 2,
    });
    expect(silent.grade).toMatchObject({ resolved: false, error: "empty_patch" });

    const predictions = (await readFile(join(out, "predictions.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, string>);
    expect(predictions).toHaveLength(3);
    for (const prediction of predictions) {
      expect(Object.keys(prediction).sort()).toEqual(["instance_id", "model_name_or_path", "model_patch"]);
      expect(prediction.model_patch).toBe(byId(results, prediction.instance_id!).patch);
      expect(prediction.model_name_or_path).toBe(`replay:${join(fixtures, "replays")}`);
    }

    const report = await readFile(join(out, "report.md"), "utf8");
    expect(report).toMatch(
      /\| default +\| 3\/3 +\| 1 +\| 33\.3 +\| 0\.0000 +\| 4\.0 +\| exit_replay_exhausted 1, submitted 1, submitted \(exit_replay_exhausted\) 1 \|/,
    );
    expect(report).toMatch(
      /\| default +\| break-clamp +\| failed: PASS_TO_PASS tests\.test_ops\.OpsTest\.test_clamp +\|/,
    );
  });

  it("resumes: a second invocation runs only the instances without a finished result", async () => {
    const before = await readResults(out);
    // As if the run had been interrupted before no-submit finished.
    await writeFile(
      join(out, "results.json"),
      JSON.stringify({ results: before.filter((result) => result.instance_id !== "no-submit") }),
    );
    const second = await cli(...evalArgs());
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("2 already finished, 1 to run");
    expect(second.stdout).toContain("start default no-submit");
    expect(second.stdout).not.toContain("start default fix-mean");
    const after = await readResults(out);
    expect(after).toHaveLength(3);
    for (const id of ["fix-mean", "break-clamp"]) expect(byId(after, id)).toEqual(byId(before, id));
    expect(byId(after, "no-submit").finished_at).not.toBe(byId(before, "no-submit").finished_at);
    expect(byId(after, "no-submit").exit_status).toBe("exit_replay_exhausted");
  });
});
