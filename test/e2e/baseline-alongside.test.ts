import Docker from "dockerode";
import { it as base, describe, expect } from "vitest";
import {
  message,
  type OpenAIStandIn,
  type ScriptedReply,
  startOpenAIStandIn,
} from "../support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker, the GitHub stand-in, the OpenAI stand-in.
// The repository's tests block until a file appears in their sandbox, then fail: the baseline cannot end
// before the test lets it. The agent's first model request must come while it is still blocked, and the
// failing baseline must then stop the agent with the status a failing baseline has always given. The
// status shows the baseline's output and what it looks like, and what the agent had spent; a gate run
// that times out says so, with its limit and the baseline's time, and one longer than test.timeoutSeconds
// passes within the limit the baseline's time gives it; a run that goes on though the tests
// failed before tells the model so.
const ready = (await requireRedis()) && (await requireSandboxImage());
const docker = new Docker();
const RELEASE = "/tmp/af-release-baseline";

/** Creates the release file, as root, in every running sandbox of the job (the baseline's among them). */
async function releaseBaseline(stack: Stack, jobId: string): Promise<void> {
  for (const container of await stack.containers(jobId)) {
    if (container.State !== "running") continue;
    await docker
      .getContainer(container.Id)
      .exec({ Cmd: ["touch", RELEASE], User: "0" })
      .then((exec) => exec.start({ Detach: true }))
      .catch(() => undefined); // removed meanwhile
  }
}

let installations = 0;

/**
 * Each test's own OpenAI stand-in (its script is the model's one queue of replies) and its own stack
 * using it, its sample repositories in an installation of its own (StackOptions.installationId): with
 * nothing shared, the tests run side by side, their baselines' and
 * scripted models' waits overlapping.
 */
const it = base.extend<{
  stack: Stack;
  openai: OpenAIStandIn;
}>({
  openai: async ({ task: _ }, use) => {
    const openai = await startOpenAIStandIn();
    try {
      await use(openai);
    } finally {
      await openai.close();
    }
  },
  stack: async ({ openai }, use) => {
    const stack = new Stack({
      model: null,
      env: { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: "stand-in-key" },
      installationId: ++installations,
    });
    try {
      await use(await stack.start());
    } finally {
      await stack.stop();
    }
  },
});

describe.runIf(ready).concurrent("the baseline runs alongside the agent", () => {
  it("the agent's first model request comes before the baseline ends; a failing baseline then stops the run as before", async ({
    stack,
    openai,
  }) => {
    const command = `while [ ! -e ${RELEASE} ]; do sleep 0.2; done; exit 1`;
    const repo = await stack.addSampleRepo("blocked-baseline", {
      ".github/agent-fix.yml": `test:\n  command: ${command}\n`,
    });
    const issue = stack.addIssue(repo);
    // The model never answers: only the baseline's verdict can end this run.
    openai.enqueue({ kind: "hang" });
    expect(await stack.label(issue)).toBeLessThan(300);
    await waitFor("the agent's first model request", () => openai.requests.length > 0, 180_000);
    expect(stack.finalStatus(issue)).toBeUndefined();

    const jobId = `fix-${issue.repoId}-${issue.number}`;
    // Released in every sandbox running, again until the run ends: the baseline's may still be starting.
    const status = await waitFor(
      "a final status",
      async () => {
        await releaseBaseline(stack, jobId);
        return stack.finalStatus(issue);
      },
      120_000,
      500,
    );
    expect(status.body).toContain("already fail on main before any change");
    expect(status.body).toContain("exited 1");
    expect(status.body).toContain("openPullRequestWhenBaselineFails: true");
    expect(status.body).toContain("It looks like **real failing tests**");
    // The one request never answered is not dropped without a word.
    expect(status.body).toContain(
      "**Spent before the stop:** no model call had finished; the first was on its way and was cancelled",
    );
    expect(openai.requests).toHaveLength(1);
    expect(stack.pulls(issue)).toEqual([]);
    await waitFor(
      "the run's sandboxes to be removed",
      async () => (await stack.containers(jobId)).length === 0,
      60_000,
    );
  }, 420_000);

  it("a baseline failing for the environment shows its output's tail, its class and what the agent spent", async ({
    stack,
    openai,
  }) => {
    // The slim image has no pytest: the shell's own message, for real, once the test lets the baseline go.
    const command = `while [ ! -e ${RELEASE} ]; do sleep 0.2; done; pytest -q`;
    const repo = await stack.addSampleRepo("no-pytest", {
      ".github/agent-fix.yml": `test:\n  command: ${command}\n`,
    });
    const issue = stack.addIssue(repo);
    const before = openai.requests.length;
    // One answered call (its usage is what the status must report), then one that never is.
    openai.enqueue(
      withUsage(message("Look around first.", { name: "bash", arguments: { command: "ls" } }), 1_234, 56),
      { kind: "hang" },
    );
    await stack.label(issue);
    await waitFor("the agent's second model request", () => openai.requests.length >= before + 2, 180_000);
    const jobId = `fix-${issue.repoId}-${issue.number}`;
    const status = await waitFor(
      "a final status",
      async () => {
        await releaseBaseline(stack, jobId);
        return stack.finalStatus(issue);
      },
      120_000,
      500,
    );
    expect(status.body).toContain(
      "it looks like the environment, not the tests. `pytest` is not installed in the sandbox",
    );
    expect(status.body).toContain("It looks like **the environment: a missing command**");
    expect(status.body).not.toContain("openPullRequestWhenBaselineFails");
    // The tail, fenced as the shell printed it.
    expect(status.body).toMatch(/```text\n(?:.*\n)*.*pytest: command not found\n```/);
    expect(status.body).toContain(
      "**Spent before the stop:** the agent had made 1 model call (1,234 tokens sent, 56 received,",
    );
    expect(status.body).toContain("One more call was on its way and was cancelled");
    expect(openai.requests).toHaveLength(before + 2);
    expect(stack.pulls(issue)).toEqual([]);
  }, 420_000);

  it("a gate run that times out says so, with its limit and the baseline's time, to the model and in the status", async ({
    stack,
    openai,
  }) => {
    // Passes at once on the unchanged code; hangs once the change adds hang.flag.
    const command = "if [ -e hang.flag ]; then sleep 600; fi; exit 0";
    const repo = await stack.addSampleRepo("hanging-change", {
      ".github/agent-fix.yml": `test:\n  command: ${command}\n  timeoutSeconds: 5\nlimits:\n  maxSteps: 4\n`,
    });
    const issue = stack.addIssue(repo);
    const submit = { name: "submit", arguments: {} };
    openai.enqueue(
      message("Make the change.", { name: "bash", arguments: { command: "touch hang.flag" } }),
      // Late enough that the baseline (a second) has its time when the gate's run is given its limit.
      { ...message("Submit it.", submit), delayMs: 10_000 } as ScriptedReply,
      message("Confirm the submission.", submit),
      message("Look again.", { name: "bash", arguments: { command: "ls" } }),
    );
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 300_000);
    // The model read the gate's verdict in its fourth request.
    const observation = JSON.stringify(openai.requests.at(-1)?.body.messages ?? []);
    expect(observation).toContain(`The test command \`${command}\` timed out: it was stopped after 5 s`);
    expect(observation).toMatch(
      /the tests took \d+ s on the unchanged code, in the baseline on the same machine/,
    );
    expect(observation).toContain("likely makes a test hang");
    expect(status.body).toContain(
      `\`${command}\` still failed on it; its last run timed out: it was stopped after 5 s`,
    );
    expect(status.body).toContain(`⏱️ \`${command}\` timed out after 5 s`);
    expect(stack.pulls(issue)).toEqual([]);
  }, 420_000);

  it("a gate run longer than test.timeoutSeconds passes within the limit the baseline's time gives it", async ({
    stack,
    openai,
  }) => {
    // 2 s on the unchanged code; 4 s with the change, past the configured 3 s but within 3 × the baseline's.
    const command = "sleep 2; if [ -e slow.flag ]; then sleep 2; fi; exit 0";
    const repo = await stack.addSampleRepo("slow-change", {
      ".github/agent-fix.yml": `test:\n  command: ${command}\n  timeoutSeconds: 3\nlimits:\n  maxSteps: 4\n`,
    });
    const issue = stack.addIssue(repo);
    const submit = { name: "submit", arguments: {} };
    openai.enqueue(
      message("Make the change.", { name: "bash", arguments: { command: "touch slow.flag" } }),
      { ...message("Submit it.", submit), delayMs: 10_000 } as ScriptedReply,
      // The gate passes on the confirmed submission, which ends the loop.
      message("Confirm the submission.", submit),
    );
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 300_000);
    expect(status.body).toContain("opened draft pull request #");
    expect(stack.pulls(issue)).toHaveLength(1);
    // Every scripted reply was asked for: the submission was confirmed once, and the run ended there.
    expect(openai.remaining()).toBe(0);
  }, 420_000);

  it("a run that goes on though the tests failed before tells the model so with the gate's verdict", async ({
    stack,
    openai,
  }) => {
    const command = "echo 'FAILED tests/test_old.py::test_old - assert 1 == 2'; exit 1";
    const repo = await stack.addSampleRepo("red-before", {
      ".github/agent-fix.yml": `test:\n  command: ${JSON.stringify(command)}\nopenPullRequestWhenBaselineFails: true\nlimits:\n  maxSteps: 4\n`,
    });
    const issue = stack.addIssue(repo);
    const submit = { name: "submit", arguments: {} };
    openai.enqueue(
      message("Make the change.", { name: "bash", arguments: { command: "echo fixed > fix.txt" } }),
      message("Submit it.", submit),
      message("Confirm the submission.", submit),
      message("Look again.", { name: "bash", arguments: { command: "ls" } }),
    );
    await stack.label(issue);
    await waitFor("a final status", () => stack.finalStatus(issue), 300_000);
    const messages = (openai.requests.at(-1)?.body.messages ?? []) as { content?: unknown }[];
    const observation = messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
    expect(observation).toContain(
      `Note: \`${command}\` failed before your change too (on the unchanged code it exited 1; it looks like real failing tests)`,
    );
    expect(observation).toContain(
      "FAILED tests/test_old.py::test_old - assert 1 == 2\n(end of the run before your change)",
    );
  }, 420_000);
});

/** A scripted reply that reports this usage. */
function withUsage(reply: ScriptedReply, prompt: number, completion: number): ScriptedReply {
  return reply.kind === "message"
    ? { ...reply, usage: { prompt_tokens: prompt, completion_tokens: completion } }
    : reply;
}
