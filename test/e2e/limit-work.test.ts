import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { type SampleRepo, Stack, sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// A run that stops on a limit with a change in its workspace: the real app, worker, Redis and Docker
// sandboxes, a replayed model. The final status must show the change and the tests' result on it.
const ready = (await requireRedis()) && (await requireSandboxImage());
const SECRET = "npm_l1mitWORKsecret77";

describe.runIf(ready)("end to end: a run stopped by a limit keeps its work visible", () => {
  const stack = new Stack({
    model: null,
    setupSecrets: { "octo/limit-secret": { NPM_TOKEN: SECRET } },
  });

  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  async function run(repo: SampleRepo): Promise<{ issue: IssueRef; body: string }> {
    const issue = stack.addIssue(repo);
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 240_000);
    return { issue, body: status.body };
  }

  async function expectNothingPushed(issue: IssueRef): Promise<void> {
    expect(stack.pulls(issue)).toEqual([]);
    expect(Object.keys(await stack.github.branches(issue.owner, issue.repo))).toEqual(["main"]);
  }

  it("out of steps after an unsubmitted fix: the diff in a collapsed fence, the tests passed, how to continue", async () => {
    const repo = await stack.addSampleRepo(
      "limit-steps",
      sampleConfig("sample-limit-steps.jsonl", { extra: "limits:\n  maxSteps: 3" }),
    );
    const { issue, body } = await run(repo);
    expect(body).toContain("stopped without a pull request");
    expect(body).toContain("The agent reached its step limit (3 steps)");
    expect(body).toContain("The agent stopped (`exit_step_limit`)");
    expect(body).toContain("✅ `python3 -m unittest discover -s tests` passed (exit 0)");
    expect(body).toMatch(/<details><summary>Last lines of the test output<\/summary>[\s\S]*\nOK\n/);
    // The change as the host computed it, verbatim (backticks, emoji) in a fence longer than its runs.
    expect(body).toContain("<details><summary>The change (1 file, +2 −0)</summary>");
    expect(body).toContain("````diff\ndiff --git a/textstats/stats.py b/textstats/stats.py\n");
    expect(body).toContain("+    if len(ordered) % 2 == 0:  # ```mean``` of the middle pair 🎉\n");
    expect(body).toContain("+        return (ordered[middle - 1] + ordered[middle]) / 2\n");
    expect(body).toContain("\n     return ordered[middle]\n````\n");
    expect(body).toContain("**To continue:** comment `/agent-fix`");
    expect(body).toContain("raise `limits.maxSteps` in `.github/agent-fix.yml`");
    await expectNothingPushed(issue);
    // The sandboxes go once the run ends (the failed status is written alongside their removal).
    await waitFor("no sandbox left", async () => (await stack.containers()).length === 0, 60_000);
  }, 300_000);

  it("out of steps after failing gates: the last gate's failing result on the same change is shown", async () => {
    const repo = await stack.addSampleRepo(
      "limit-gate-fails",
      sampleConfig("sample-gate-fails.jsonl", { extra: "limits:\n  maxSteps: 4" }),
    );
    const { issue, body } = await run(repo);
    expect(body).toMatch(/submitted a change 1 time\(s\) but .* still failed on it/);
    expect(body).toContain("❌ `python3 -m unittest discover -s tests` failed (exit 1)");
    expect(body).toMatch(/FAILED \(failures=\d+/);
    expect(body).toContain("+    return ordered[middle] / 2\n");
    await expectNothingPushed(issue);
  }, 300_000);

  it("a change holding a setup secret's value is withheld from the status", async () => {
    const replay = join(tmpdir(), `agent-fix-limit-secret-${process.pid}.jsonl`);
    // Built in the shell, so the value is in no step's arguments or output (the summary shows those).
    const write = JSON.stringify({
      command: `printf 'token=%s%s\\n' '${SECRET.slice(0, 8)}' '${SECRET.slice(8)}' > leak.txt`,
    });
    writeFileSync(
      replay,
      `${JSON.stringify({
        role: "assistant",
        content: "Write it down.",
        tool_calls: [{ id: "call_s1", type: "function", function: { name: "bash", arguments: write } }],
      })}\n`,
    );
    const repo = await stack.addSampleRepo("limit-secret", {
      ...sampleConfig(null),
      ".github/agent-fix.yml": `${sampleConfig(null)[".github/agent-fix.yml"]}model: replay:${replay}\n`,
    });
    const { issue, body } = await run(repo);
    expect(body).toContain("The agent stopped (`exit_replay_exhausted`)");
    expect(body).toContain("The diff is withheld: it holds the value of the setup secret(s) `NPM_TOKEN`");
    expect(body).not.toContain(SECRET);
    expect(body).not.toContain("+token=");
    await expectNothingPushed(issue);
  }, 300_000);
});
