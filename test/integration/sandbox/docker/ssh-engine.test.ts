/**
 * A Docker engine reached over SSH (`ssh://USER@HOST` in AGENT_FIX_DOCKER_HOSTS): Debian's sshd on a
 * loopback port in front of a private engine, keys made at test time, the client's in an ssh agent
 * (test/support/ssh-engine.ts), its host key in a known_hosts file. The pool checks it, runs a sandbox
 * there (its shells, files and export through SSH), and a stopped engine behind it ends the sandbox's
 * command as that engine's loss; a host whose key is not the one known is not used; closing the pool
 * ends its SSH connections. Nothing skips:
 * without sshd the test fails, saying what to install.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerEnginePool } from "../../../../sandbox/docker/engine-pool.js";
import { dockerEngines } from "../../../../sandbox/docker/engines.js";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import type { SandboxProvider } from "../../../../src/shared/contracts.js";
import { InfrastructureError } from "../../../../src/shared/errors.js";
import type { OwnDockerd } from "../../../support/own-dockerd.js";
import { sandboxEngine } from "../../../support/sandbox-engine.js";
import { requireSandboxImage } from "../../../support/services.js";
import { type SshClient, type SshEngine, sshClient, sshEngine } from "../../../support/ssh-engine.js";
import { waitFor } from "../../../support/stack-parts.js";

const ready = await requireSandboxImage();

describe.runIf(ready)("a Docker engine over SSH", () => {
  let engine: OwnDockerd;
  let client: SshClient;
  let ssh: SshEngine;
  let source = "";
  let pool: DockerEnginePool;
  const log: string[] = [];

  beforeAll(async () => {
    [{ engine }, client] = await Promise.all([sandboxEngine(), sshClient()]);
    ssh = await sshEngine(engine.host, client);
    source = await mkdtemp(join(tmpdir(), "af-ssh-src-"));
    await writeFile(join(source, "a.txt"), "hello\n");
    // As the worker reads it: the address, and the key from the agent SSH_AUTH_SOCK names.
    const previous = process.env.SSH_AUTH_SOCK;
    process.env.SSH_AUTH_SOCK = client.authSock;
    try {
      const engines = dockerEngines({ hosts: ssh.host, knownHosts: client.knownHosts });
      pool = new DockerEnginePool(
        engines.map(({ options, ...one }) => ({
          ...one,
          provider: new DockerSandboxProvider({ docker: new Docker(options) }),
        })),
        (line) => log.push(line),
        { everyMs: 500, timeoutMs: 5000, misses: 2 },
      );
    } finally {
      if (previous === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = previous;
    }
  }, 600_000);
  afterAll(async () => {
    await pool?.close();
    await ssh?.stop();
    await client?.stop();
    await engine?.remove();
    if (source) await rm(source, { recursive: true, force: true });
  });

  it("is checked at start and runs a sandbox: its shells, files and export over SSH", async () => {
    expect(ssh.host).toMatch(/^ssh:\/\/\w+@127\.0\.0\.1:\d+$/);
    expect((await pool.checkEngines()).map((c) => [c.name, c.up, c.image])).toEqual([
      [ssh.host, true, "present"],
    ]);
    const run: SandboxProvider = pool.forRun("ssh-run");
    const sandbox = await run.create({ sourceDir: source, jobId: "ssh-run" });
    try {
      expect((await sandbox.exec("cat a.txt; id -u")).output).toBe("hello\n1000\n");
      await sandbox.writeFile("b.txt", "over ssh\n");
      expect((await sandbox.readFile("b.txt")).toString()).toBe("over ssh\n");
      const names: string[] = [];
      const archive = await sandbox.exportWorkspace();
      for await (const chunk of archive)
        names.push(...(chunk.toString("latin1").match(/\.\/[ab]\.txt/g) ?? []));
      expect(names.sort()).toEqual(["./a.txt", "./b.txt"]);
      // The container is on the engine behind sshd.
      expect((await engine.docker.listContainers()).map((c) => c.Labels["agent-fix.job"])).toContain(
        "ssh-run",
      );
    } finally {
      await sandbox.dispose();
    }
  }, 180_000);

  it("the engine behind it stopped: the command in flight ends as that engine's loss, naming it", async () => {
    const run = pool.forRun("ssh-lost");
    const sandbox = await run.create({ sourceDir: source, jobId: "ssh-lost" });
    try {
      const command = sandbox.exec("sleep 600", { timeoutMs: 900_000 }).then(
        () => expect.fail("a command ended on a stopped engine"),
        (e: unknown) => e,
      );
      await waitFor("the command on the engine", () => engine.running("sleep 600"), 30_000, 100);
      await engine.stop();
      const error = await command;
      expect(error).toBeInstanceOf(InfrastructureError);
      expect(error).toMatchObject({ code: "docker_engine_lost", retryable: true });
      expect((error as Error).message).toContain(`The Docker engine ${ssh.host}`);
      // The pool marks it down once a ping confirms the loss, which may end after the command's failure.
      await waitFor(
        "the engine marked down",
        () => log.join("\n").includes(`Docker engine ${ssh.host} is skipped until it answers`),
        30_000,
        100,
      );
    } finally {
      await sandbox.dispose();
      await engine.start();
    }
  }, 180_000);

  it("a host whose key is not the one known is not used: the engine reads as not answering", async () => {
    // Another host's key under this host's name: what a worker sees of someone else at that address.
    const other = join(source, "known_hosts");
    const [type, blob] = (await readFile(client.knownHosts, "utf8")).trim().split(" ").slice(1);
    expect(type).toMatch(/^ssh-/);
    const stranger = Buffer.from(blob ?? "", "base64");
    stranger[stranger.length - 1] = (stranger.at(-1) ?? 0) ^ 0xff;
    await writeFile(
      other,
      `${ssh.host.replace(/^ssh:\/\/\w+@(.*):(\d+)$/, "[$1]:$2")} ${type} ${stranger.toString("base64")}\n`,
    );
    const [engine] = dockerEngines({ hosts: ssh.host, knownHosts: other });
    const wary = new DockerEnginePool([
      {
        ...(engine as NonNullable<typeof engine>),
        provider: new DockerSandboxProvider({ docker: new Docker(engine?.options) }),
      },
    ]);
    try {
      const [check] = await wary.checkEngines();
      expect(check).toMatchObject({ name: ssh.host, up: false });
      expect(check?.problem).toContain(`Docker engine ${ssh.host} does not answer`);
      console.log(`[ssh-engine] a host key not the known one: ${check?.problem}`);
      expect(check?.problem).toMatch(/host denied|verification failed/i);
    } finally {
      await wary.close();
    }
  }, 60_000);

  it("closing the pool ends its SSH connections: no session is left open on the engine host", async () => {
    const port = new URL(ssh.host).port;
    // This process's TCP connections to sshd, as the kernel counts them.
    const open = () =>
      execFileSync("ss", ["-Htn", "state", "established", `( dport = :${port} )`], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean).length;
    await pool.checkEngines(); // a call, so a connection is open whatever the tests before it left
    expect(open()).toBeGreaterThan(0);
    await pool.close();
    await waitFor("the SSH connections ended", () => open() === 0, 10_000, 50);
  }, 60_000);
});
