import { once } from "node:events";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Workers as their own processes (npm run start:worker), killed or stopped mid-run.
const ready = (await requireRedis()) && (await requireSandboxImage());
const docker = new Docker();

describe.runIf(ready)("a worker that dies or is stopped mid-run", () => {
  // Short locks: a dead worker's job moves on after seconds, not a minute.
  const stack = new Stack({ model: null, worker: false, lockMs: 3_000 });
  const jobId = (issue: IssueRef) => `fix-${issue.repoId}-${issue.number}`;

  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  it("SIGKILL: another worker completes the job, one pull request, no container left", async () => {
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
    await stack.worker?.shutdown(1_000);
  }, 180_000);

  it("SIGTERM: stops taking jobs, cancels its run after the grace period, leaves the status final", async () => {
    const repo = await stack.addSampleRepo("stopped", sampleConfig("sample-slow.jsonl"));
    const issue = stack.addIssue(repo);
    const child = stack.spawnWorker();
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await stack.label(issue);
    await waitFor("the agent's first step", () => stack.inPhase(issue, "Working on a fix"));
    await waitFor("the sandbox", async () => (await stack.containers(jobId(issue))).length > 0);
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(output).toContain("SIGTERM");
    const status = stack.finalStatus(issue);
    expect(status?.body).toContain("shut down");
    expect(await stack.containers(jobId(issue))).toEqual([]);
    expect(stack.pulls(issue)).toEqual([]);
  }, 120_000);
});
