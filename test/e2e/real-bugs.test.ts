/**
 * The real-bug recordings (test/fixtures/real-bugs/, issue 27) still resolve: each project is fetched
 * from its registry and committed as the recording started from it, and `agent-fix eval` (the CLI as a
 * child process, real Docker sandboxes in the rich image) replays the recorded replies through today's
 * agent and grades the submitted change with the later release's test for the bug, which the agent
 * never saw. The same replay must submit the same patch. Beside each, a replay that changes only the
 * README is graded too: the hidden test must fail on the code the agent started from, or the grade would
 * prove nothing. Each run takes a sample of the bugs (test/support/sample.ts: two a run, in turn by the
 * hour, all when their recordings or this test changed, or with TEST_SAMPLE=all); the output says which.
 */
import { cp, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_RICH_IMAGE } from "../../sandbox/version.js";
import type { InstanceResult } from "../../worker/eval/results.js";
import { readEvalResults, resultOf, cli as runCli } from "../support/eval-repo.js";
import { checkoutRealBug, type RealBug, realBugInstance, realBugs } from "../support/real-bugs.js";
import { turn } from "../support/replay-turns.js";
import { sampleOf } from "../support/sample.js";
import { requireSandboxImage } from "../support/services.js";

const ready = await requireSandboxImage(SANDBOX_RICH_IMAGE);
const sampled = sampleOf("real bugs", await realBugs(), {
  perSlot: 2,
  name: (bug) => bug.name,
  ownCode: [
    "test/e2e/real-bugs.test.ts",
    "test/support/real-bugs.ts",
    "test/fixtures/real-bugs/",
    "worker/eval/",
  ],
});
const bugs = sampled.run;

/** A replay that appends an empty line to the README and submits: the base code, graded. */
const README_ONLY = [
  turn("Touch the README only.", "bash", { command: "echo >> \"$(ls | grep -i '^readme' | head -n 1)\"" }),
  turn("Submitting.", "submit"),
  turn("An empty line in the README.", "submit"),
].join("\n");

describe.runIf(ready)(
  "the real-bug recordings replayed and graded by agent-fix eval",
  { timeout: 1_200_000 },
  () => {
    let results: InstanceResult[];
    let run: { code: number; stdout: string; stderr: string };

    beforeAll(async () => {
      const root = await mkdtemp(join(tmpdir(), "real-bugs-"));
      const replays = join(root, "replays");
      await mkdir(replays);
      const instances: string[] = [];
      for (const bug of bugs) {
        // The directory's name is the repository's name in the agent's prompt, as when it was recorded.
        const repo = join(root, "repos", bug.name);
        const base = await checkoutRealBug(bug, repo, { testDeps: false });
        const instance = { ...realBugInstance(bug, repo, base), image: SANDBOX_RICH_IMAGE };
        instances.push(JSON.stringify(instance));
        instances.push(JSON.stringify({ ...instance, instance_id: `${bug.name}-unfixed` }));
        await cp(bug.replay, join(replays, `${bug.name}.jsonl`));
        await writeFile(join(replays, `${bug.name}-unfixed.jsonl`), `${README_ONLY}\n`);
      }
      const file = join(root, "instances.jsonl");
      await writeFile(file, `${instances.join("\n")}\n`);
      const out = join(root, "out");
      run = await runCli(["eval", file, "--model", `replay:${replays}`, "--workers", "2", "--out", out]);
      results = await readEvalResults(out);
    }, 1_200_000);

    it("runs every instance", () => {
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(results).toHaveLength(bugs.length * 2);
    });

    it.each(bugs.map((bug) => [bug.name, bug] as const))(
      "%s: the recorded replies resolve the bug with the recorded patch",
      (_name, bug: RealBug) => {
        const result = resultOf(results, bug.name);
        expect(result.error).toBeUndefined();
        expect(result).toMatchObject({ exit_status: "submitted", baseline_passed: true, resolved: true });
        expect(result.grade).toMatchObject({ FAIL_TO_PASS: { failed: [] }, PASS_TO_PASS: { failed: [] } });
        expect(result.patch).toBe(bug.patch);
      },
    );

    it.each(bugs.map((bug) => [bug.name, bug] as const))(
      "%s: the hidden test fails on the code the agent started from",
      (_name, bug: RealBug) => {
        const result = resultOf(results, `${bug.name}-unfixed`);
        expect(result.error).toBeUndefined();
        expect(result).toMatchObject({ exit_status: "submitted", baseline_passed: true, resolved: false });
        expect(result.grade).toMatchObject({ FAIL_TO_PASS: { passed: [] } });
      },
    );
    for (const title of sampled.skipped) it.skip(title, () => {});
  },
);
