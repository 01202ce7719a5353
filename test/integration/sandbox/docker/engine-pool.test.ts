/**
 * Sandboxes on another host's engine: a private dockerd listening on TCP with `--tlsverify`
 * (certificates made at test time, test/support/docker-tls.ts) beside the shared local engine, both
 * named the way an operator names them (AGENT_FIX_DOCKER_HOSTS, AGENT_FIX_DOCKER_TLS_DIR) and pooled.
 * Runs spread over the two, a run's sandboxes stay on its engine, an engine stopped mid-run is skipped
 * and the run's next sandbox goes to the other; a wrong client certificate is refused by the engine. A
 * run holds one engine (forRun): its repository's image, its kept environment and its sandboxes are
 * that engine's. An engine gone silent (nothing refuses, nothing answers) ends the command in flight as
 * its loss; an engine without the sandbox image is named at start with the command that loads it, and
 * gets no run.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineFault } from "../../../../sandbox/docker/engine-fault.js";
import { DockerEnginePool } from "../../../../sandbox/docker/engine-pool.js";
import { dockerEngines } from "../../../../sandbox/docker/engines.js";
import { DockerSandboxProvider, LABEL } from "../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE, SANDBOX_IMAGE_NAME, SANDBOX_IMAGE_VERSION } from "../../../../sandbox/version.js";
import type { KeptEnvironment, Sandbox, SandboxProvider } from "../../../../src/shared/contracts.js";
import { InfrastructureError } from "../../../../src/shared/errors.js";
import { type DockerTls, makeDockerTls } from "../../../support/docker-tls.js";
import type { OwnDockerd } from "../../../support/own-dockerd.js";
import { sandboxEngine } from "../../../support/sandbox-engine.js";
import { requireSandboxImage } from "../../../support/services.js";
import { waitFor } from "../../../support/stack-parts.js";

const ready = await requireSandboxImage();

/** The jobs of the sandboxes running on `docker`. */
async function jobsOn(docker: Docker): Promise<string[]> {
  const containers = await docker.listContainers({ filters: { label: [LABEL.job] } });
  return containers.map((c) => c.Labels[LABEL.job] ?? "");
}

describe.runIf(ready)("a pool of the local engine and a remote one over TCP with TLS", () => {
  let remote: OwnDockerd;
  let tls: DockerTls;
  let certs = "";
  let slimImage = "";
  let source = "";
  let pool: DockerEnginePool;
  let remoteDocker: Docker;
  const local = new Docker();
  const sandboxes: Sandbox[] = [];
  const prefix = `pool-${process.pid}`;

  beforeAll(async () => {
    certs = await mkdtemp(join(tmpdir(), "af-tls-"));
    tls = await makeDockerTls(certs);
    ({ engine: remote, slimImage } = await sandboxEngine({ tls }));
    source = await mkdtemp(join(tmpdir(), "af-pool-"));
    await writeFile(join(source, "a.txt"), "hello\n");
    // As the operator writes it: the local engine, and the remote one by its TLS port.
    const engines = dockerEngines({
      hosts: `unix:///var/run/docker.sock,${remote.tcpHost}`,
      tlsDir: tls.clientDir,
    });
    pool = new DockerEnginePool(
      engines.map((engine) => ({
        name: engine.name,
        provider: new DockerSandboxProvider({ docker: new Docker(engine.options) }),
      })),
    );
    remoteDocker = (pool.engines[1] as (typeof pool.engines)[number]).provider.docker;
  }, 600_000);
  afterAll(async () => {
    for (const sandbox of sandboxes) await sandbox.dispose().catch(() => undefined);
    await pool?.close();
    await remote?.remove();
    for (const dir of [certs, source]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("spreads two runs over the two engines; a run's sandboxes stay on its engine", async () => {
    expect((await pool.ping()).map((p) => p.up)).toEqual([true, true]);
    const first = await pool.create({ sourceDir: source, jobId: `${prefix}-a` });
    sandboxes.push(first);
    const second = await pool.create({ sourceDir: source, jobId: `${prefix}-b` });
    sandboxes.push(second);
    // Each engine holds one run's sandbox: the fewest running decides.
    expect(await jobsOn(local)).toContain(`${prefix}-a`);
    expect(await jobsOn(local)).not.toContain(`${prefix}-b`);
    expect(await jobsOn(remoteDocker)).toEqual([`${prefix}-b`]);
    expect((await second.exec("cat a.txt")).output).toBe("hello\n");
    // The run's next sandbox goes where its first is, though the other engine is as busy.
    const again = await pool.create({ sourceDir: source, jobId: `${prefix}-b` });
    sandboxes.push(again);
    expect(await jobsOn(remoteDocker)).toEqual([`${prefix}-b`, `${prefix}-b`]);
  }, 180_000);

  it("an engine stopped mid-run: its sandbox fails as the engine's loss, and the run's retry goes to the other", async () => {
    const onRemote = sandboxes[1] as Sandbox;
    await remote.stop();
    const error = await onRemote.exec("cat a.txt").then(
      () => expect.fail("a command ran on a stopped engine"),
      (e: unknown) => e,
    );
    expect(engineFault(error)).toBeInstanceOf(InfrastructureError);
    const retried = await pool.create({ sourceDir: source, jobId: `${prefix}-b` });
    sandboxes.push(retried);
    expect(await jobsOn(local)).toContain(`${prefix}-b`);
    expect(pool.engines.map((e) => e.down)).toEqual([false, true]);
    expect((await pool.ping()).map((p) => p.up)).toEqual([true, false]);
  }, 180_000);

  it("refuses a client certificate the engine's CA did not sign", async () => {
    await remote.start();
    const other = join(certs, "other");
    await mkdir(other);
    const stranger = await makeDockerTls(other);
    // The remote engine's CA, so the server is trusted; the client's certificate is another CA's.
    const wrong = join(certs, "wrong");
    await mkdir(wrong);
    await copyFile(join(certs, "ca.pem"), join(wrong, "ca.pem"));
    await copyFile(join(stranger.clientDir, "cert.pem"), join(wrong, "cert.pem"));
    await copyFile(join(stranger.clientDir, "key.pem"), join(wrong, "key.pem"));
    const [engine] = dockerEngines({ hosts: remote.tcpHost, tlsDir: wrong });
    const refused = new DockerEnginePool([
      {
        name: engine?.name ?? "",
        provider: new DockerSandboxProvider({ docker: new Docker(engine?.options) }),
      },
    ]);
    const [ping] = await refused.ping();
    expect(ping?.up).toBe(false);
    expect(ping?.error).toMatch(/certificate|alert|socket hang up|ECONNRESET/i);
    // The engine is not trusted without its CA either: the worker's own CA file is another's.
    const [good] = dockerEngines({ hosts: remote.tcpHost, tlsDir: stranger.clientDir });
    await expect(new Docker(good?.options).ping()).rejects.toThrow(
      /certificate|self-signed|unable to verify/i,
    );
  }, 120_000);

  /** A pool of the remote engine first, then the local one, as the operator names them; its log lines. */
  function remoteFirst(options: ConstructorParameters<typeof DockerSandboxProvider>[0] = {}) {
    const log: string[] = [];
    const engines = dockerEngines({
      hosts: `${remote.tcpHost},unix:///var/run/docker.sock`,
      tlsDir: tls.clientDir,
    });
    const made = new DockerEnginePool(
      engines.map(({ options: docker, ...engine }) => ({
        ...engine,
        provider: new DockerSandboxProvider({ ...options, docker: new Docker(docker) }),
      })),
      (line) => log.push(line),
      // Watched often, so the test does not wait on the default's seconds.
      { everyMs: 200, timeoutMs: 1000, misses: 2 },
    );
    return {
      pool: made,
      log,
      remoteDocker: (made.engines[0] as (typeof made.engines)[number]).provider.docker,
    };
  }

  it("a run holds one engine: its repository's image is built, its environment kept and found, its sandboxes started there", async () => {
    const kept = `agent-fix-kept-pool-${process.pid}`;
    const { pool: two, remoteDocker: there } = remoteFirst({
      keptEnvironments: { name: kept, maxSize: "2g" },
    });
    const job = `${prefix}-held`;
    const run = two.forRun(job);
    const made: Sandbox[] = [];
    try {
      const image = await (run.repoImage as NonNullable<SandboxProvider["repoImage"]>)({
        root: source,
        context: ".",
        dockerfile: `FROM ${SANDBOX_IMAGE}\nUSER 0:0\nRUN echo built here > /built.txt\nUSER 1000:1000\n`,
        bases: [SANDBOX_IMAGE],
        name: "octo/pool-held",
      });
      // Built on the engine the run holds (the remote one, first and idle), not on the local one.
      expect((await there.getImage(image).inspect()).Id).toBe(image);
      await expect(local.getImage(image).inspect()).rejects.toMatchObject({ statusCode: 404 });
      const setup = await run.create({ sourceDir: source, jobId: job, image, setup: { user: "agent" } });
      made.push(setup);
      expect(await jobsOn(there)).toContain(job);
      const environments = run.environments as NonNullable<SandboxProvider["environments"]>;
      const environment = (await environments.keep(setup, {
        key: "pool-held",
        repository: "octo/pool-held",
        reusable: true,
        workspace: { dir: source, files: ["a.txt"], hostFiles: [] },
        secrets: [],
      })) as KeptEnvironment;
      expect(environment.image).toMatch(new RegExp(`^${kept}:`));
      await there.getImage(environment.image).inspect();
      await expect(local.getImage(environment.image).inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect(await environments.find("pool-held", image)).toMatchObject({ image: environment.image });
      // The run's next sandbox starts from what it kept, on the same engine.
      const agent = await run.create({ sourceDir: source, jobId: job, image: environment.image });
      made.push(agent);
      expect((await agent.exec("cat /built.txt a.txt")).output).toBe("built here\nhello\n");
      expect((await jobsOn(there)).filter((j) => j === job)).toHaveLength(1);
      // Another run goes to the idle local engine, where nothing of the first one's is kept.
      const other = two.forRun(`${prefix}-other`);
      expect(await other.environments?.find("pool-held", image)).toBeNull();
    } finally {
      for (const sandbox of made) await sandbox.dispose().catch(() => undefined);
      await two.close();
    }
  }, 300_000);

  it("an engine gone silent (nothing refuses, nothing answers): the command in flight ends as its loss, naming it", async () => {
    const { pool: two, log } = remoteFirst();
    const job = `${prefix}-silent`;
    const run = two.forRun(job);
    const sandbox = await run.create({ sourceDir: source, jobId: job });
    try {
      const name = (two.engines[0] as (typeof two.engines)[number]).name;
      const command = sandbox.exec("sleep 600", { timeoutMs: 900_000 }).then(
        () => expect.fail("a command ended on an engine gone silent"),
        (e: unknown) => e,
      );
      await waitFor("the command on the remote engine", () => remote.running("sleep 600"), 60_000, 100);
      remote.silenceTcp();
      const error = await command;
      expect(error).toBeInstanceOf(InfrastructureError);
      expect(error).toMatchObject({ code: "docker_engine_lost", retryable: true });
      expect((error as Error).message).toContain(`The Docker engine ${name} stopped answering`);
      expect(log.join("\n")).toContain(`Docker engine ${name} is skipped until it answers`);
      // The run's other calls fail as the same loss at once; the sandbox goes without waiting for it.
      await expect(sandbox.readFile("a.txt")).rejects.toMatchObject({ code: "docker_engine_lost" });
      await expect(run.create({ sourceDir: source, jobId: job })).rejects.toMatchObject({
        code: "docker_engine_lost",
      });
      await sandbox.dispose();
      // The run's retry (a new attempt) holds the local engine.
      const retried = await two.forRun(job).create({ sourceDir: source, jobId: job });
      sandboxes.push(retried);
      expect(await jobsOn(local)).toContain(job);
      expect(log.join("\n")).toContain(
        `run ${job} moves from Docker engine ${name} to unix:///var/run/docker.sock`,
      );
    } finally {
      await two.close();
      await remote.restart();
    }
  }, 300_000);

  it("an engine without the sandbox image is named at start with the command that loads it, and gets no run", async () => {
    // The remote engine keeps the slim image under its own name only.
    await remote.docker.getImage(SANDBOX_IMAGE).remove({ noprune: true });
    const { pool: two, log } = remoteFirst();
    try {
      const name = (two.engines[0] as (typeof two.engines)[number]).name;
      const checks = await two.checkEngines();
      expect(checks.map((c) => [c.up, c.image])).toEqual([
        [true, "missing"],
        [true, "present"],
      ]);
      const problem = checks[0]?.problem ?? "";
      expect(problem).toContain(`Docker engine ${name} lacks the sandbox image ${SANDBOX_IMAGE}`);
      expect(problem).toContain(
        `docker save ${SANDBOX_IMAGE} | docker --host ${name} --tlsverify --tlscacert ${join(tls.clientDir, "ca.pem")}`,
      );
      expect(log).toContain(problem);
      // First and idle, but without the image: the run goes to the local engine.
      const first = await two
        .forRun(`${prefix}-noimage`)
        .create({ sourceDir: source, jobId: `${prefix}-noimage` });
      sandboxes.push(first);
      expect(await jobsOn(local)).toContain(`${prefix}-noimage`);
      // Loaded (tagged) again: the next run may go there.
      await remote.docker.getImage(slimImage).tag({ repo: SANDBOX_IMAGE_NAME, tag: SANDBOX_IMAGE_VERSION });
      const next = await two
        .forRun(`${prefix}-loaded`)
        .create({ sourceDir: source, jobId: `${prefix}-loaded` });
      sandboxes.push(next);
      expect(await jobsOn(remote.docker)).toContain(`${prefix}-loaded`);
      expect(log).toContain(`Docker engine ${name} has the sandbox image ${SANDBOX_IMAGE} now`);
      await next.dispose();
    } finally {
      await two.close();
    }
  }, 300_000);
});
