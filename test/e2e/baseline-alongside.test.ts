import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAIStandIn, startOpenAIStandIn } from "../support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker, the GitHub stand-in, the OpenAI stand-in.
// The repository's tests block until a file appears in their sandbox, then fail: the baseline cannot end
// before the test lets it. The agent's first model request must come while it is still blocked, and the
// failing baseline must then stop the agent with the status a failing baseline has always given.
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

describe.runIf(ready)("the baseline runs alongside the agent", () => {
  let openai: OpenAIStandIn;
  let stack: Stack;

  beforeAll(async () => {
    openai = await startOpenAIStandIn();
    stack = new Stack({ model: null, env: { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: "stand-in-key" } });
    await stack.start();
  });
  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  it("the agent's first model request comes before the baseline ends; a failing baseline then stops the run as before", async () => {
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
    expect(openai.requests).toHaveLength(1);
    expect(stack.pulls(issue)).toEqual([]);
    await waitFor(
      "the run's sandboxes to be removed",
      async () => (await stack.containers(jobId)).length === 0,
      60_000,
    );
  }, 420_000);
});
