import { once } from "node:events";
import { readdir } from "node:fs/promises";
import Docker from "dockerode";
import { afterAll, describe, it } from "vitest";
import { CHECK_RUN_NAME } from "../../worker/run/publish/check-run.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Workers as their own processes (npm run start:worker), killed or stopped mid-run.
const ready = (await requireRedis()) && (await requireSandboxImage());
const docker = new Docker();

// The four go side by side: most of each is waiting (a lock lapsing, the replay's 8 s step, a worker
// process starting), and each has a stack of its own (its own queue), since each starts and kills the
// workers of its queue.
describe.runIf(ready).concurrent("a worker that dies or is stopped mid-run", () => {
  const stacks: Stack[] = [];
  /** A stack with no worker of its own: its test starts them. */
  async function startStack(): Promise<Stack> {
    // Short locks: a dead worker's job moves on after seconds, not a minute. An installation of its own
    // (see StackOptions.installationId).
    const stack = new Stack({ model: null, worker: false, lockMs: 3_000, installationId: stacks.length + 1 });
    stacks.push(stack);
    return stack.start();
  }
  const jobId = (issue: IssueRef) => `fix-${issue.repoId}-${issue.number}`;

  afterAll(() => Promise.all(stacks.map((stack) => stack.stop())));

  it("SIGKILL: another worker completes the job, one pull request, no container left", async ({ expect }) => {
    const stack = await startStack();
    const repo = await stack.addSampleRepo("killed", sampleConfig("sample-median-pause.jsonl"));
    const issue = stack.addIssue(repo);
    const child = stack.spawnWorker();
    await stack.label(issue);
    await waitFor("the agent's first step", () => stack.inPhase(issue, "Working on a fix"));
    const [orphan] = await waitFor("the first worker's sandbox", async () => {
      const found = await stack.containers(jobId(issue));
      return found.length > 0 ? found : undefined;
    });
    child.kill("SIGKILL");
    await once(child, "exit");

    await stack.startWorker();
    const status = await waitFor(
      "the job to finish on the second worker",
      () => stack.finalStatus(issue),
      120_000,
    );
    expect(status.body).toContain("opened draft pull request");
    expect(stack.pulls(issue)).toHaveLength(1);
    // The killed worker's sandbox was reaped, and the second run disposed of its own.
    await waitFor("no sandbox left", async () => (await stack.containers(jobId(issue))).length === 0, 30_000);
    await expect(docker.getContainer(orphan!.Id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    // The killed worker's host checkout was reaped too; the second run removes its own as it ends.
    await waitFor("no checkout left", async () => (await readdir(stack.workDir)).length === 0, 30_000);
    await stack.worker?.shutdown(1_000);
  }, 180_000);

  it("SIGKILL once its check run exists: the next attempt completes it as cancelled, saying why, and reports in its own", async ({
    expect,
  }) => {
    const stack = await startStack();
    const repo = await stack.addSampleRepo("killed-checked", sampleConfig("sample-median.jsonl"));
    const issue = stack.addIssue(repo);
    const ownChecks = () =>
      stack.github.ci.checkRuns.filter((c) => c.repo === repo.name && c.name === CHECK_RUN_NAME);
    // GitHub creates the check run; the worker is killed before its answer reaches it.
    const held = stack.github.holdAnswer("POST", new RegExp(`^/repos/octo/${repo.name}/check-runs$`));
    const child = stack.spawnWorker();
    await stack.label(issue);
    await waitFor("the check run to be created", () => held.arrived.then(() => true), 180_000);
    child.kill("SIGKILL");
    await once(child, "exit");
    held.release();
    expect(ownChecks().map((c) => c.status)).toEqual(["in_progress"]);

    await stack.startWorker();
    const status = await waitFor(
      "the job to finish on the next worker",
      () => stack.finalStatus(issue),
      180_000,
    );
    expect(status.body).toContain("opened draft pull request");
    const head = (await stack.github.branches(issue.owner, issue.repo))[`agent-fix/issue-${issue.number}`];
    const [left, own] = ownChecks();
    expect(ownChecks()).toHaveLength(2);
    expect(left).toMatchObject({ status: "completed", conclusion: "cancelled" });
    expect(left?.output.title).toBe("The worker stopped; another attempt took over");
    expect(left?.output.summary).toContain("reports in a check run of its own on the commit it pushes");
    expect(own).toMatchObject({ status: "completed", conclusion: "success", headSha: head });
    await stack.worker?.shutdown(1_000);
  }, 240_000);

  it("a worker that dies twice on the same job: the job fails for good, the status says why", async ({
    expect,
  }) => {
    const stack = await startStack();
    const repo = await stack.addSampleRepo("killed-twice", sampleConfig("sample-median-pause.jsonl"));
    const issue = stack.addIssue(repo);
    await stack.label(issue);
    // Each child worker takes the job (after the one before it died), reaches the agent, and is killed.
    for (const death of [1, 2]) {
      const child = stack.spawnWorker();
      const [sandbox] = await waitFor(`worker ${death}'s sandbox`, async () => {
        const found = (await stack.containers(jobId(issue))).filter((c) =>
          c.Labels["agent-fix.worker"]?.endsWith(`:${child.pid}`),
        );
        return found.length > 0 ? found : undefined;
      });
      await waitFor(`worker ${death} at the agent`, () => stack.inPhase(issue, "Working on a fix"));
      expect(sandbox).toBeDefined();
      child.kill("SIGKILL");
      await once(child, "exit");
    }
    // A live worker finds the job stalled past the limit; BullMQ fails it without running it.
    await stack.startWorker();
    const status = await waitFor("the status to be final", () => stack.finalStatus(issue), 120_000);
    expect(status.body).toContain("stopped without a pull request");
    expect(status.body).toContain("stopped without finishing 2 times");
    expect(status.body).toContain("Add the label again");
    expect(await stack.app?.queue.queue.getJobState(jobId(issue))).toBe("failed");
    expect(stack.pulls(issue)).toEqual([]);
    await waitFor("no sandbox left", async () => (await stack.containers(jobId(issue))).length === 0, 30_000);
    await stack.worker?.shutdown(1_000);
  }, 240_000);

  it("SIGTERM (a rolling deploy): the worker hands its run back to the queue, another worker finishes it, the status says it was resumed", async ({
    expect,
  }) => {
    const stack = await startStack();
    const repo = await stack.addSampleRepo("stopped", sampleConfig("sample-median-pause.jsonl"));
    const issue = stack.addIssue(repo);
    // No grace: the run (its first step sleeps 8 s) cannot finish before it is handed back.
    // LOG_LEVEL info: the stack's default (warn) would hide the shutdown's lines this test reads.
    const child = stack.spawnWorker({ AGENT_FIX_SHUTDOWN_GRACE_SECONDS: "0", LOG_LEVEL: "info" });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await stack.label(issue);
    await waitFor("the agent's first step", () => stack.inPhase(issue, "Working on a fix"));
    await waitFor("the sandbox", async () => (await stack.containers(jobId(issue))).length > 0);
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(output).toContain("SIGTERM");
    // Not cancelled, not failed: waiting for the next worker, and the issue is told so.
    expect(await stack.app?.queue.queue.getJobState(jobId(issue))).toBe("waiting");
    expect(stack.statusComment(issue)?.body).toContain("went back to the queue");
    expect(stack.finalStatus(issue)).toBeUndefined();
    expect(await stack.containers(jobId(issue))).toEqual([]);

    await stack.startWorker();
    const status = await waitFor(
      "the run to finish on the next worker",
      () => stack.finalStatus(issue),
      180_000,
    );
    expect(status.body).toContain("opened draft pull request");
    expect(stack.pulls(issue)).toHaveLength(1);
    expect(status.history.some((body) => body.includes("Resumed on another worker"))).toBe(true);
    await stack.worker?.shutdown(1_000);
  }, 300_000);
});
