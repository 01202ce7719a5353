/**
 * The Docker engine restarted while a run is in the agent phase. A private dockerd (the shared engine
 * is never restarted) with the sandbox image in it (its slim copy, from a template engine loaded once
 * per image: sandbox-engine.ts; timed), and a worker process pointed at it through DOCKER_HOST, as an operator
 * would. The run's sandboxes die with the engine: the run must fail cleanly or be retried, and the
 * status comment must say what happened (the Docker engine, not the agent or the repository). First,
 * quickly, the same at the sandbox's level on the same engine: the engine's loss reads as the engine's.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineFault } from "../../sandbox/docker/engine-fault.js";
import { DockerSandboxProvider } from "../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE } from "../../sandbox/version.js";
import { InfrastructureError } from "../../src/shared/errors.js";
import type { OwnDockerd } from "../support/own-dockerd.js";
import { sandboxEngine } from "../support/sandbox-engine.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";
import { fixJobIdOf, jobRetries, reportFigure } from "./figures.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

/** What the pipeline makes of a sandbox call's failure (worker/run/end/run-failure.ts). */
async function failureOf(call: Promise<unknown>): Promise<InfrastructureError> {
  const error = await call.then(
    () => expect.fail("the call succeeded on a lost engine"),
    (e: unknown) => e,
  );
  const fault = engineFault(error);
  expect(fault, String(error)).toBeInstanceOf(InfrastructureError);
  return fault as InfrastructureError;
}

describe.runIf(ready)("the Docker engine restarted mid-run", () => {
  let engine: OwnDockerd;
  let loadMs = 0;
  let startMs = 0;
  // The retries after the engine's loss 8 and 24 s later (production's 3 attempts), not 30 and 90 s:
  // the wait tests nothing here, as long as the engine is back by the last (below). It came back 0.5 s
  // after its stop in one whole run and 11.4 s in the next (load), after a 2 s backoff's last retry.
  const stack = new Stack({
    model: null,
    worker: false,
    env: { AGENT_FIX_JOB_BACKOFF_SECONDS: "8", AGENT_FIX_JOB_ATTEMPTS: "3" },
  });
  let source = "";
  beforeAll(async () => {
    // The slim copy of the sandbox image (a third of its size) under the sandbox image's own name, so
    // the worker runs it as it runs its default image.
    // Its restart kills the sandboxes after 1 s, not the 15 s a stop gives containers by default: the
    // run's retries come seconds after the engine's loss, and are spent if it is not back by then.
    const [started] = await Promise.all([sandboxEngine({ shutdownTimeoutSeconds: 1 }), stack.start()]);
    engine = started.engine;
    loadMs = started.loadMs;
    startMs = started.startMs;
    console.log(
      `[fault-figure] ${started.slimImage}: built in ${(started.buildMs / 1000).toFixed(1)} s (0: reused)`,
    );
    console.log(
      `[fault-figure] loading ${SANDBOX_IMAGE} (slim) into the engines' template took ${(loadMs / 1000).toFixed(1)} s (0: reused); starting the private engine on a copy of it ${(startMs / 1000).toFixed(1)} s`,
    );
    source = await mkdtemp(join(tmpdir(), "af-lost-"));
    await writeFile(join(source, "a.txt"), "hello\n");
  }, 600_000);
  afterAll(async () => {
    await stack.stop();
    await engine?.remove();
    if (source) await rm(source, { recursive: true, force: true });
  });

  it("restarted under a sandbox's command: the next command fails as the engine's loss, and says so", async () => {
    const sandbox = await new DockerSandboxProvider({ docker: engine.docker }).create({
      sourceDir: source,
      jobId: "engine-lost",
    });
    try {
      const first = sandbox.exec("sleep 8", { timeoutMs: 60_000 }).catch((e: unknown) => e);
      await waitFor("the command in the sandbox", () => engine.running("sleep 8"), 30_000, 100);
      // The next command goes as soon as the running one ends, as the agent's does: while the engine
      // shuts down (its socket answers, the container still shows as running for a moment) or is gone.
      const restarted = engine.restart();
      await first;
      const next = failureOf(sandbox.exec("cat a.txt"));
      await restarted;
      const fault = await next;
      console.log(`[docker-restart] sandbox: ${fault.describe()}`);
      expect(fault).toMatchObject({ code: "docker_engine_lost", fault: "infrastructure", retryable: true });
      expect(fault.describe()).toMatch(
        /^The Docker engine on the worker was unreachable or stopped the run's sandbox during the run \(.*(is not running|did not show container|connect ENOENT).*\) \(docker_engine_lost\)/,
      );
    } finally {
      await sandbox.dispose().catch(() => undefined);
    }
  }, 120_000);

  it("down when a sandbox is asked for: its refused socket is the engine's loss", async () => {
    await engine.stop();
    try {
      const provider = new DockerSandboxProvider({ docker: engine.docker });
      const fault = await failureOf(provider.create({ sourceDir: source, jobId: "engine-down" }));
      expect(fault.describe()).toMatch(
        /connect (ENOENT|ECONNREFUSED) .*docker\.sock.*\(docker_engine_lost\)/,
      );
    } finally {
      await engine.start();
    }
  }, 60_000);

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
    await waitFor("the agent's command in its sandbox", () => engine.running("sleep 8"), 60_000, 200);
    const restarting = Date.now();
    await engine.restart();
    const back = Date.now();
    console.log(
      `[docker-restart] the engine was back ${((back - restarting) / 1000).toFixed(1)} s after its stop`,
    );

    const status = await waitFor("the status to be final", () => stack.finalStatus(issue), 300_000).catch(
      (error: unknown) => {
        console.log(output.slice(-4000));
        throw error;
      },
    );
    const recoverMs = Date.now() - back;
    const history = status.history.join("\n---\n");
    const retrying = status.history.flatMap((body) => body.split("\n").filter((l) => /retrying/i.test(l)));
    console.log(`[docker-restart] retry notes:\n${[...new Set(retrying)].join("\n")}`);
    console.log(
      `[docker-restart] worker: ${output
        .split("\n")
        .filter((l) => /retrying after/.test(l))
        .join("\n")}`,
    );
    // The status names the Docker engine as what failed, and that the run is retried: never a bare
    // sandbox code (shell_start_failed) that reads as the sandbox's or the repository's fault.
    expect(history).toMatch(
      /The Docker engine on the worker was unreachable or stopped the run's sandbox during the run \(.*\); retrying \(attempt 2 of \d+\) \(docker_engine_lost\)/,
    );
    expect(retrying.join("\n")).not.toMatch(/shell_start_failed|sandbox_start_failed|docker_unavailable/);
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
      detail: `image load ${(loadMs / 1000).toFixed(1)} s (0: template reused), engine start ${(startMs / 1000).toFixed(1)} s`,
    });
    child.kill("SIGTERM");
  }, 600_000);
});
