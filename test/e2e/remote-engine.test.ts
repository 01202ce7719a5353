/**
 * A worker whose sandboxes run on another host's Docker engine: a private dockerd listening on TCP
 * with `--tlsverify` (certificates made at test time), named as an operator names it
 * (AGENT_FIX_DOCKER_HOSTS, AGENT_FIX_DOCKER_TLS_DIR). Label -> draft PR with every sandbox of the run on
 * that engine and none on the local one. With the local engine beside it, the remote one stopped while
 * the agent's command runs there, or gone silent as a host that vanished: the run fails as that
 * engine's loss, is retried on the local one and ends in a pull request. With both and kept
 * environments on, a run's setup is kept on the engine it holds, its later sandboxes start from it
 * there, and the repository's next run reuses it. A worker says at start which engine lacks the
 * sandbox image and which does not answer, with the fixes; one whose TLS directory lacks its key
 * refuses to start.
 */
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../sandbox/docker/kept-environments.js";
import { LABEL } from "../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE, SANDBOX_IMAGE_NAME, SANDBOX_IMAGE_VERSION } from "../../sandbox/version.js";
import { watchContainerCreates } from "../support/container-events.js";
import { type DockerTls, makeDockerTls } from "../support/docker-tls.js";
import type { OwnDockerd } from "../support/own-dockerd.js";
import { freePort } from "../support/ports.js";
import { sandboxEngine } from "../support/sandbox-engine.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { childOutput, waitFor } from "../support/stack-parts.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("sandboxes on a remote engine over TCP with TLS", () => {
  let engine: OwnDockerd;
  let slimImage = "";
  let tls: DockerTls;
  let certs = "";
  // Kept environments on (the stack's own tuning has none): only a repository with setup commands keeps one.
  const stack = new Stack({
    model: null,
    worker: false,
    workerTuning: { keptEnvironments: { size: "2g" } },
    // A failover's retry 2 s after the engine's loss, not the production 30 s: the wait tests nothing here.
    env: { AGENT_FIX_JOB_BACKOFF_SECONDS: "2" },
  });
  const kept = `agent-fix-kept-remote-${process.pid}`;
  beforeAll(async () => {
    certs = await mkdtemp(join(tmpdir(), "af-tls-"));
    tls = await makeDockerTls(certs);
    [{ engine, slimImage }] = await Promise.all([sandboxEngine({ tls }), stack.start()]);
  }, 600_000);
  afterAll(async () => {
    await stack.stop();
    // None is expected on the shared engine; should a run have kept one there, it goes.
    const local = new Docker();
    for (const image of await local.listImages({ filters: { label: [`${KEPT_LABEL.kept}=${kept}`] } }))
      await local
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined);
    await engine?.remove();
    if (certs) await rm(certs, { recursive: true, force: true });
  });

  it("label -> draft PR with the run's sandboxes on the remote engine, none on the local one", async () => {
    const repo = await stack.addSampleRepo("remote-engine", sampleConfig("sample-median.jsonl"));
    const issue = stack.addIssue(repo);
    const jobs: string[] = [];
    const events = await engine.docker.getEvents({ filters: { type: ["container"], event: ["create"] } });
    events.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        const event = JSON.parse(line) as { Actor: { Attributes: Record<string, string> } };
        jobs.push(event.Actor.Attributes[LABEL.job] ?? "?");
      }
    });
    const local = await watchContainerCreates();
    const child = stack.spawnWorker({
      AGENT_FIX_DOCKER_HOSTS: engine.tcpHost,
      AGENT_FIX_DOCKER_TLS_DIR: tls.clientDir,
      AGENT_FIX_WORKER_TAG: stack.prefix,
    });
    const text = childOutput(child);
    try {
      expect(await stack.label(issue)).toBe(200);
      const status = await waitFor("the status to be final", () => stack.finalStatus(issue), 300_000).catch(
        (error: unknown) => {
          console.log(text().slice(-4000));
          throw error;
        },
      );
      expect(status.body).toContain("opened draft pull request");
      expect(stack.pulls(issue)).toHaveLength(1);
      console.log(`[remote-engine] the run's containers on the remote engine: ${jobs.join(", ")}`);
      // Baseline, agent, gate at least, all on the remote engine; nothing of this worker's on the local one.
      expect(jobs.length).toBeGreaterThanOrEqual(3);
      expect(local.createdBy(stack.prefix)).toEqual([]);
    } finally {
      (events as unknown as { destroy(): void }).destroy();
      local.stop();
      child.kill("SIGTERM");
    }
  }, 400_000);

  /**
   * A worker over the remote engine (first: with none running on either, the run goes to it) and the
   * local one; the remote engine goes the way `lose` takes it while the agent's command runs there. The
   * run must fail as that engine's loss, named, be retried on the local engine and end in a pull request.
   */
  async function failover(name: string, how: string, lose: () => Promise<void>): Promise<void> {
    const repo = await stack.addSampleRepo(name, sampleConfig("sample-median-pause.jsonl"));
    const issue = stack.addIssue(repo);
    const local = await watchContainerCreates();
    const child = stack.spawnWorker({
      AGENT_FIX_DOCKER_HOSTS: `${engine.tcpHost},unix:///var/run/docker.sock`,
      AGENT_FIX_DOCKER_TLS_DIR: tls.clientDir,
      AGENT_FIX_WORKER_TAG: stack.prefix,
    });
    const text = childOutput(child);
    try {
      expect(await stack.label(issue)).toBe(200);
      // The replay's first step sleeps 8 s in the agent's sandbox, on the remote engine.
      await waitFor(
        "the agent's command on the remote engine",
        () => engine.running("sleep 8"),
        180_000,
        200,
      );
      expect(local.createdBy(stack.prefix)).toEqual([]);
      await lose();
      const lost = Date.now();
      const status = await waitFor("the status to be final", () => stack.finalStatus(issue), 300_000).catch(
        (error: unknown) => {
          console.log(text().slice(-6000));
          throw error;
        },
      );
      console.log(
        `[remote-engine] failover, the engine ${how}: a pull request ${((Date.now() - lost) / 1000).toFixed(1)} s after`,
      );
      const history = status.history.join("\n---\n");
      // The retry note names the engine that went away.
      expect(history).toMatch(
        /The Docker engine tcp:\/\/127\.0\.0\.1:\d+ .*; retrying \(attempt 2 of \d+\) \(docker_engine_lost\)/,
      );
      expect(status.body).toContain("opened draft pull request");
      expect(stack.pulls(issue)).toHaveLength(1);
      // The retry's sandboxes ran on the local engine.
      expect(local.createdBy(stack.prefix).length).toBeGreaterThanOrEqual(2);
      expect(text()).toMatch(
        /moves from Docker engine tcp:\/\/127\.0\.0\.1:\d+ to unix:\/\/\/var\/run\/docker\.sock/,
      );
    } finally {
      local.stop();
      child.kill("SIGTERM");
    }
  }

  it("two engines, the run's stopped under the agent's command: retried on the other, then a pull request", async () => {
    try {
      await failover("remote-failover", "stopped", () => engine.stop());
    } finally {
      await engine.start();
    }
  }, 600_000);

  it("two engines, the run's gone silent (its host vanished: nothing refuses, nothing answers): retried on the other", async () => {
    try {
      await failover("remote-silent", "silent", async () => engine.silenceTcp());
    } finally {
      await engine.restart();
    }
  }, 600_000);

  it("two engines, kept environments on: setup kept on the run's engine, its sandboxes from it there, the next run reusing it", async () => {
    // Setup writes outside the workspace; the tests need it, so the baseline and the gate fail in a
    // sandbox that did not start from the kept environment.
    const config = sampleConfig("sample-median.jsonl", { setup: ["date +%s%N > /var/tmp/prepared"] });
    config[".github/agent-fix.yml"] = (config[".github/agent-fix.yml"] as string).replace(
      "command: python3 -m unittest discover -s tests",
      "command: test -s /var/tmp/prepared && python3 -m unittest discover -s tests",
    );
    const repo = await stack.addSampleRepo("remote-kept", config);
    const keptOn = async (docker: Docker) =>
      (await docker.listImages({ filters: { label: [`${KEPT_LABEL.kept}=${kept}`] } })).length;
    // The remote engine first: with none running on either, each run goes to it.
    const child = stack.spawnWorker({
      AGENT_FIX_DOCKER_HOSTS: `${engine.tcpHost},unix:///var/run/docker.sock`,
      AGENT_FIX_DOCKER_TLS_DIR: tls.clientDir,
      AGENT_FIX_WORKER_TAG: stack.prefix,
      AGENT_FIX_KEPT_ENVIRONMENTS_NAME: kept,
    });
    const text = childOutput(child);
    try {
      const bodies: string[] = [];
      for (const title of ["median is wrong", "median is wrong again"]) {
        const issue = stack.addIssue(repo, { title, body: "median([1, 2, 3, 4]) should be 2.5" });
        expect(await stack.label(issue)).toBe(200);
        const status = await waitFor("the status to be final", () => stack.finalStatus(issue), 300_000).catch(
          (error: unknown) => {
            console.log(text().slice(-6000));
            throw error;
          },
        );
        expect(status.body).toContain("opened draft pull request");
        bodies.push(status.history.join("\n---\n"));
      }
      // Kept on the remote engine the runs held, never on the local one.
      expect(await keptOn(engine.docker)).toBeGreaterThanOrEqual(1);
      expect(await keptOn(new Docker())).toBe(0);
      expect(bodies[0]).not.toContain("reused the environment prepared at");
      expect(bodies[1]).toContain("reused the environment prepared at");
    } finally {
      child.kill("SIGTERM");
    }
  }, 700_000);

  it("a worker says at start which engine lacks the sandbox image and which does not answer, with the fixes", async () => {
    // The remote engine keeps the slim image under its own name only; nothing listens on the other port.
    await engine.docker.getImage(SANDBOX_IMAGE).remove({ noprune: true });
    const nobody = `tcp://127.0.0.1:${await freePort()}`;
    const child = stack.spawnWorker({
      AGENT_FIX_DOCKER_HOSTS: `${engine.tcpHost},${nobody},unix:///var/run/docker.sock`,
      AGENT_FIX_DOCKER_TLS_DIR: tls.clientDir,
      AGENT_FIX_WORKER_TAG: stack.prefix,
    });
    const text = childOutput(child);
    try {
      const said = () => text().includes("lacks the sandbox image") && text().includes("does not answer");
      await waitFor("the worker's start-up lines", said, 60_000).catch((error: unknown) => {
        console.log(text().slice(-4000));
        throw error;
      });
      expect(text()).toContain(
        `Docker engine ${engine.tcpHost} lacks the sandbox image ${SANDBOX_IMAGE}: no run goes to it while another engine has it. Load it from a host that has it: \`docker save ${SANDBOX_IMAGE} | docker --host ${engine.tcpHost} --tlsverify --tlscacert ${join(tls.clientDir, "ca.pem")}`,
      );
      expect(text()).toMatch(new RegExp(`Docker engine ${nobody} does not answer \\(.*ECONNREFUSED.*\\)`));
      expect(child.exitCode).toBeNull(); // it runs on with the engine that can take runs
    } finally {
      child.kill("SIGTERM");
      await engine.docker.getImage(slimImage).tag({ repo: SANDBOX_IMAGE_NAME, tag: SANDBOX_IMAGE_VERSION });
    }
  }, 120_000);

  it("a worker whose TLS directory has no key refuses to start, naming the file and the fix", async () => {
    const child = stack.spawnWorker({
      AGENT_FIX_DOCKER_HOSTS: engine.tcpHost,
      AGENT_FIX_DOCKER_TLS_DIR: certs, // the CA's directory: ca.pem, but no cert.pem or key.pem
      AGENT_FIX_WORKER_TAG: stack.prefix,
    });
    const text = childOutput(child);
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(text()).toMatch(/AGENT_FIX_DOCKER_TLS_DIR: cannot read .*cert\.pem/);
    expect(text()).toContain("as Docker's DOCKER_CERT_PATH");
  }, 120_000);
});
