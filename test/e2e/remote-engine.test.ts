/**
 * A worker whose sandboxes run on other hosts' Docker engines, named as an operator names them: a
 * private dockerd listening on TCP with `--tlsverify` (certificates made at test time;
 * AGENT_FIX_DOCKER_HOSTS, AGENT_FIX_DOCKER_TLS_DIR), and engines behind Debian's sshd (keys made at test
 * time, the worker's in its ssh agent, the hosts' in its known_hosts; test/support/ssh-engine.ts).
 * Label -> draft PR over DOCKER_HOST=ssh://, every sandbox of the run on the engine behind sshd and none
 * on the local one. A worker over the TLS engine and an ssh:// one in front of this host's engine: the
 * TLS engine stopped while the agent's command runs there, or gone silent as a host that vanished, the
 * run fails as that engine's loss, is retried over ssh and ends in a pull request. With both and kept
 * environments on, a run's setup is kept on the engine it holds, its later sandboxes start from it
 * there, and the repository's next run reuses it. A worker says at start which engine lacks the
 * sandbox image and which does not answer, with the fixes; one whose TLS directory lacks its key
 * refuses to start.
 *
 * Waits that test nothing are cut through the production settings: the job's backoff
 * (AGENT_FIX_JOB_BACKOFF_SECONDS) and the engine watch's pings (worker.engineWatch), and one worker
 * serves the runs that share a configuration.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../sandbox/docker/kept-environments.js";
import { SANDBOX_IMAGE, SANDBOX_IMAGE_NAME, SANDBOX_IMAGE_VERSION } from "../../sandbox/version.js";
import { watchContainerCreates } from "../support/container-events.js";
import { type DockerTls, makeDockerTls } from "../support/docker-tls.js";
import type { OwnDockerd } from "../support/own-dockerd.js";
import { freePort } from "../support/ports.js";
import { sandboxEngine } from "../support/sandbox-engine.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { type SshClient, type SshEngine, sshClient, sshEngine } from "../support/ssh-engine.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { childOutput, waitFor } from "../support/stack-parts.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

/** This host's engine, as AGENT_FIX_DOCKER_HOSTS names it. */
const LOCAL_ENGINE = "unix:///var/run/docker.sock";

describe.runIf(ready)("sandboxes on remote engines, over TCP with TLS and over SSH", () => {
  let engine: OwnDockerd;
  let slimImage = "";
  let tls: DockerTls;
  let certs = "";
  let client: SshClient;
  /** sshd in front of the private engine, and in front of this host's. */
  let sshPrivate: SshEngine;
  let sshLocal: SshEngine;
  // Kept environments on (the stack's own tuning has none): only a repository with setup commands keeps
  // one. A failover's retry 2 s after the engine's loss, not the production 30 s, and a silent engine
  // found in about 5 s rather than 15: the waits test nothing here.
  const stack = new Stack({
    model: null,
    worker: false,
    workerTuning: {
      keptEnvironments: { size: "2g" },
      engineWatch: { everyMs: 1000, timeoutMs: 2500, misses: 2 },
    },
    env: { AGENT_FIX_JOB_BACKOFF_SECONDS: "2" },
  });
  const kept = `agent-fix-kept-remote-${process.pid}`;
  /** How the worker reaches ssh:// engines: the key in its agent, the hosts' keys in its known_hosts. */
  const sshEnv = () => ({
    SSH_AUTH_SOCK: client.authSock,
    AGENT_FIX_DOCKER_SSH_KNOWN_HOSTS: client.knownHosts,
  });
  beforeAll(async () => {
    certs = await mkdtemp(join(tmpdir(), "af-tls-"));
    tls = await makeDockerTls(certs);
    [{ engine, slimImage }, client] = await Promise.all([sandboxEngine({ tls }), sshClient(), stack.start()]);
    [sshPrivate, sshLocal] = await Promise.all([
      sshEngine(engine.host, client),
      sshEngine(LOCAL_ENGINE, client),
    ]);
  }, 600_000);
  afterAll(async () => {
    pair?.child.kill("SIGTERM");
    await stack.stop();
    // None is expected on the shared engine; should a run have kept one there, it goes.
    const local = new Docker();
    for (const image of await local.listImages({ filters: { label: [`${KEPT_LABEL.kept}=${kept}`] } }))
      await local
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined);
    await sshPrivate?.stop();
    await sshLocal?.stop();
    await client?.stop();
    await engine?.remove();
    if (certs) await rm(certs, { recursive: true, force: true });
  });

  it("label -> draft PR over DOCKER_HOST=ssh://: the run's sandboxes on the engine behind sshd, none on the local one", async () => {
    const repo = await stack.addSampleRepo("ssh-engine", sampleConfig("sample-median.jsonl"));
    const issue = stack.addIssue(repo);
    const remote = await watchContainerCreates(engine.docker);
    const local = await watchContainerCreates();
    // One engine, named as the docker CLI names it: the worker checks its host key as ssh does.
    const child = stack.spawnWorker({
      DOCKER_HOST: sshPrivate.host,
      ...sshEnv(),
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
      const jobs = remote.createdBy(stack.prefix);
      console.log(`[remote-engine] the run's containers on the engine behind sshd: ${jobs.join(", ")}`);
      // Baseline, agent, gate at least, all on the engine behind sshd; nothing of this worker's on the local one.
      expect(jobs.length).toBeGreaterThanOrEqual(3);
      expect(local.createdBy(stack.prefix)).toEqual([]);
    } finally {
      remote.stop();
      local.stop();
      child.kill("SIGTERM");
    }
  }, 400_000);

  /**
   * One worker over the TLS engine (first: with none running on either, a run goes to it) and this
   * host's engine reached over ssh://, for the runs below that share that configuration (a worker's
   * start is seconds); its output since it started.
   */
  let pair: { child: ChildProcess; text: () => string } | undefined;
  const pairWorker = () => {
    if (pair && pair.child.exitCode === null) return pair;
    const child = stack.spawnWorker({
      AGENT_FIX_DOCKER_HOSTS: `${engine.tcpHost},${sshLocal.host}`,
      AGENT_FIX_DOCKER_TLS_DIR: tls.clientDir,
      ...sshEnv(),
      AGENT_FIX_WORKER_TAG: stack.prefix,
      AGENT_FIX_KEPT_ENVIRONMENTS_NAME: kept,
    });
    pair = { child, text: childOutput(child) };
    return pair;
  };
  /** Brings the TLS engine back, and waits until the pair's worker has seen it answer again. */
  async function restore(how: () => Promise<void>): Promise<void> {
    const back = new RegExp(`Docker engine ${engine.tcpHost} answers again`, "g");
    const seen = () => (pair?.text().match(back) ?? []).length;
    const before = seen();
    await how();
    if (pair) await waitFor("the worker to see the TLS engine again", () => seen() > before, 60_000);
  }

  /**
   * The TLS engine goes the way `lose` takes it while the agent's command runs there. The run must fail
   * as that engine's loss, named, be retried on the ssh:// engine and end in a pull request there.
   */
  async function failover(name: string, how: string, lose: () => Promise<void>): Promise<void> {
    // The replay's first command sleeps 8 s on a private engine only: the retry over ssh does not wait.
    const repo = await stack.addSampleRepo(name, sampleConfig("sample-median-pause-private-engine.jsonl"));
    const issue = stack.addIssue(repo);
    const local = await watchContainerCreates();
    const { text } = pairWorker();
    try {
      expect(await stack.label(issue)).toBe(200);
      await waitFor("the agent's command on the TLS engine", () => engine.running("sleep 8"), 180_000, 200);
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
      // The retry's sandboxes ran on this host's engine, reached over ssh.
      expect(local.createdBy(stack.prefix).length).toBeGreaterThanOrEqual(2);
      expect(text()).toContain(`moves from Docker engine ${engine.tcpHost} to ${sshLocal.host}`);
    } finally {
      local.stop();
    }
  }

  it("TLS and ssh:// engines, the run's stopped under the agent's command: retried over ssh, then a pull request", async () => {
    try {
      await failover("remote-failover", "stopped", () => engine.stop());
    } finally {
      await restore(() => engine.start());
    }
  }, 600_000);

  it("TLS and ssh:// engines, the run's gone silent (its host vanished: nothing refuses, nothing answers): retried over ssh", async () => {
    try {
      await failover("remote-silent", "silent", async () => engine.silenceTcp());
    } finally {
      await restore(() => engine.restart());
    }
  }, 600_000);

  it("TLS and ssh:// engines, kept environments on: setup kept on the run's engine, its sandboxes from it there, the next run reusing it", async () => {
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
    // The TLS engine first: with none running on either, each run goes to it.
    const { text } = pairWorker();
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
    // Kept on the TLS engine the runs held, never on this host's (the ssh:// one).
    expect(await keptOn(engine.docker)).toBeGreaterThanOrEqual(1);
    expect(await keptOn(new Docker())).toBe(0);
    expect(bodies[0]).not.toContain("reused the environment prepared at");
    expect(bodies[1]).toContain("reused the environment prepared at");
  }, 700_000);

  it("a worker says at start which engine lacks the sandbox image and which does not answer, with the fixes", async () => {
    // The remote engine keeps the slim image under its own name only; nothing listens on the other port.
    await engine.docker.getImage(SANDBOX_IMAGE).remove({ noprune: true });
    const nobody = `tcp://127.0.0.1:${await freePort()}`;
    const child = stack.spawnWorker({
      AGENT_FIX_DOCKER_HOSTS: `${engine.tcpHost},${nobody},${LOCAL_ENGINE}`,
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
