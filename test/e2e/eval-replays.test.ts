/**
 * A finished evaluation re-run at no cost: `agent-fix eval` with a model behind the OpenAI stand-in,
 * `agent-fix eval-replays` on its output, then `agent-fix eval --model replay:DIR`; both runs must
 * give the same verdicts, steps, patches and grades, the second at no cost.
 */
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { InstanceResult } from "../../worker/eval/results.js";
import { cli, evalFixtures, readEvalResults, writeFixtureInstances } from "../support/eval-repo.js";
import { type OpenAIStandIn, type ScriptedReply, startOpenAIStandIn } from "../support/openai-server.js";
import { requireSandboxImage } from "../support/services.js";

const ready = await requireSandboxImage();

/** The recorded fix of test/fixtures/eval/replays as the stand-in's scripted replies. */
async function scriptedFix(): Promise<ScriptedReply[]> {
  const text = await readFile(join(evalFixtures, "replays/fix-mean.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const turn = JSON.parse(line) as {
        content: string;
        tool_calls: { function: { name: string; arguments: string } }[];
      };
      const toolCalls = turn.tool_calls.map((call) => ({
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      return { kind: "message", content: turn.content, toolCalls };
    });
}

/** Reads without changing anything until the step limit (5) ends the run. */
const looking: ScriptedReply[] = ["ls", "cat mathx/ops.py", "cat tests/test_ops.py", "git status"].map(
  (command) => ({
    kind: "message",
    content: "Looking.",
    toolCalls: [{ name: "bash", arguments: { command } }],
  }),
);

/** What must be the same in both runs. */
const verdict = (result: InstanceResult) => ({
  instance_id: result.instance_id,
  resolved: result.resolved,
  exit_status: result.exit_status,
  steps: result.steps,
  patch: result.patch,
  grade: result.grade,
});

describe.runIf(ready)("eval, eval-replays, and eval again from the replays", { timeout: 900_000 }, () => {
  let server: OpenAIStandIn;
  let work: string;
  let instances: string;
  let config: string;

  beforeAll(async () => {
    server = await startOpenAIStandIn();
    work = await mkdtemp(join(tmpdir(), "eval-replays-"));
    instances = await writeFixtureInstances(["a-fix", "b-look"], () => join(work, "instances.jsonl"));
    config = join(work, "config.yaml");
    await writeFile(
      config,
      stringify({
        agent: { limits: { maxSteps: 5 } },
        model: {
          baseUrl: server.url,
          prices: { asOf: "2025-08-15", models: { "gpt-test": { input: 2, cachedInput: 0.5, output: 8 } } },
          retry: { maxRetries: 0 },
        },
      }),
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it("re-runs the evaluation from its trajectories with the same results and no cost", async () => {
    // One at a time, in the file's order: the stand-in answers requests in the order they come.
    server.enqueue(...(await scriptedFix()), ...looking, looking[0]!);
    const first = join(work, "first");
    const run = await cli(
      ["eval", instances, "--model", "openai:gpt-test", "--config", config, "--workers", "1", "--out", first],
      { OPENAI_API_KEY: "sk-test" },
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const recorded = await readEvalResults(first);
    expect(recorded.map(verdict)).toMatchObject([
      { instance_id: "a-fix", resolved: true, exit_status: "submitted", steps: 5 },
      { instance_id: "b-look", resolved: false, exit_status: "exit_step_limit", steps: 5, patch: "" },
    ]);
    expect(recorded.every((result) => result.cost_usd > 0)).toBe(true);

    const replays = join(work, "replays");
    const exported = await cli(["eval-replays", first, "--out", replays]);
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain("replays of 2 instance(s) written");
    expect((await readdir(replays)).sort()).toEqual(["a-fix.jsonl", "b-look.jsonl"]);
    const turns = (await readFile(join(replays, "b-look.jsonl"), "utf8")).trim().split("\n");
    expect(turns).toHaveLength(5);
    expect(JSON.parse(turns[1]!)).toMatchObject({
      role: "assistant",
      content: "Looking.",
      tool_calls: [
        { type: "function", function: { name: "bash", arguments: '{"command":"cat mathx/ops.py"}' } },
      ],
    });

    const requests = server.requests.length;
    const second = join(work, "second");
    const rerun = await cli([
      "eval",
      instances,
      "--model",
      `replay:${replays}`,
      "--config",
      config,
      "--out",
      second,
    ]);
    expect(rerun.stderr).toBe("");
    expect(rerun.code).toBe(0);
    const replayed = await readEvalResults(second);
    const sorted = (results: InstanceResult[]) =>
      [...results].sort((a, b) => a.instance_id.localeCompare(b.instance_id)).map(verdict);
    expect(sorted(replayed)).toEqual(sorted(recorded));
    expect(replayed.map((result) => result.cost_usd)).toEqual([0, 0]);
    expect(server.requests.length).toBe(requests);
  });

  it("refuses a directory without results of the variant, saying what to pass", async () => {
    const empty = await mkdtemp(join(tmpdir(), "eval-replays-empty-"));
    const result = await cli(["eval-replays", empty, "--out", join(empty, "out")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('holds no results of variant "default"');
    expect(result.stderr).toContain("eval_replays_no_results");
  });
});
