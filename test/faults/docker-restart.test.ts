/**
 * The Docker engine restarted while a run is in the agent phase. A private dockerd (the shared engine
 * is never restarted) with the sandbox image loaded into it once for the file (slow: timed), and a
 * worker process pointed at it through DOCKER_HOST, as an operator would. The run's sandboxes die
 * with the engine: the run must fail cleanly or be retried, and the status comment must say what
 * happened (the Docker engine, not the agent or the repository).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_IMAGE } from "../../sandbox/version.js";
import { OwnDockerd } from "../support/own-dockerd.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";
import { fixJobIdOf, jobRetries, reportFigure } from "./figures.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("the Docker engine restarted mid-run", () => {
  let engine: OwnDockerd;
  let loadMs = 0;
  const stack = new Stack({ model: null, worker: false });
  beforeAll(async () => {
    engine = await OwnDockerd.start();
    loadMs = await engine.loadImage(SANDBOX_IMAGE);
    console.log(
      `[fault-figure] loading ${SANDBOX_IMAGE} into the private engine took ${(loadMs / 1000).toFixed(1)} s`,
    );
    await stack.start();
  }, 600_000);
  afterAll(async () => {
    await stack.stop();
    await engine?.remove();
  });

  it("restarted while the agent works: the run is retried on the engine that came back, the status says it was retried and why", async () => {
    const repo = await stack.addSampleRepo("docker-restart", sampleConfig("sample-median-pause.jsonl"));
    const issue = stack.addIssue(repo);
    const child = stack.spawnWorker({ DOCKER_HOST: engine.host, AGENT_FIX_WORKER_TAG: stack.prefix });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    expect(await stack.label(issue)).toBe(200);
    // The replay's first step sleeps 8 s in the agent's sandbox, on the private engine.
    await waitFor("the agent's first step", () => stack.inPhase(issue, "Working on a fix"), 180_000);
    // The engine goes while the agent's command runs in its sandbox (`sleep 8`, seen in its processes).
    const sleeping = async () => {
      const running = await engine.docker.listContainers({ filters: { label: ["agent-fix.job"] } });
      for (const container of running) {
        const top = await engine.docker
          .getContainer(container.Id)
          .top()
          .catch(() => undefined);
        if (top?.Processes.some((p: string[]) => p.join(" ").includes("sleep 8"))) return true;
      }
      return false;
    };
    await waitFor("the agent's command in its sandbox", sleeping, 60_000, 200);
    await engine.restart();
    const back = Date.now();

    const status = await waitFor("the status to be final", () => stack.finalStatus(issue), 300_000).catch(
      (error: unknown) => {
        console.log(output.slice(-4000));
        throw error;
      },
    );
    const recoverMs = Date.now() - back;
    const history = status.history.join("\n---\n");
    console.log(history.slice(-3000));
    // The status names the engine as the cause while the job is retried.
    // The status said the run was retried, and why (a sandbox failure with its code); when Docker's
    // answer names the stopped container or the gone socket, as the engine's own fault (engine-fault.ts).
    expect(history).toMatch(
      /Retrying after a transient error: (The Docker engine on the worker stopped or restarted during the run.*\(docker_engine_lost\)|.*\((shell_start_failed|sandbox_start_failed|docker_unavailable)\))/,
    );
    expect(status.body).toContain("opened draft pull request");
    expect(stack.pulls(issue)).toHaveLength(1);
    // The job completes just after its final status is written.
    const queue = stack.app?.queue.queue;
    const ended = async () => {
      const state = await queue?.getJobState(fixJobIdOf(issue));
      return state === "completed" || state === "failed" ? state : undefined;
    };
    expect(await waitFor("the job to end", ended, 60_000)).toBe("completed");
    reportFigure({
      fault: "Docker engine restarted (SIGTERM + start) in the agent phase",
      outcome: `pull request after a retry`,
      recoverMs,
      jobRetries: await jobRetries(stack, issue),
      detail: `image load ${(loadMs / 1000).toFixed(1)} s`,
    });
    child.kill("SIGTERM");
  }, 600_000);
});
