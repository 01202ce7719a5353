/**
 * Sandboxes on another host's engine: a private dockerd listening on TCP with `--tlsverify`
 * (certificates made at test time, test/support/docker-tls.ts) beside the shared local engine, both
 * named the way an operator names them (AGENT_FIX_DOCKER_HOSTS, AGENT_FIX_DOCKER_TLS_DIR) and pooled.
 * Runs spread over the two, a run's sandboxes stay on its engine, an engine stopped mid-run is skipped
 * and the run's next sandbox goes to the other; a wrong client certificate is refused by the engine.
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
import type { Sandbox } from "../../../../src/shared/contracts.js";
import { InfrastructureError } from "../../../../src/shared/errors.js";
import { makeDockerTls } from "../../../support/docker-tls.js";
import type { OwnDockerd } from "../../../support/own-dockerd.js";
import { sandboxEngine } from "../../../support/sandbox-engine.js";
import { requireSandboxImage } from "../../../support/services.js";

const ready = await requireSandboxImage();

/** The jobs of the sandboxes running on `docker`. */
async function jobsOn(docker: Docker): Promise<string[]> {
  const containers = await docker.listContainers({ filters: { label: [LABEL.job] } });
  return containers.map((c) => c.Labels[LABEL.job] ?? "");
}

describe.runIf(ready)("a pool of the local engine and a remote one over TCP with TLS", () => {
  let remote: OwnDockerd;
  let certs = "";
  let source = "";
  let pool: DockerEnginePool;
  let remoteDocker: Docker;
  const local = new Docker();
  const sandboxes: Sandbox[] = [];
  const prefix = `pool-${process.pid}`;

  beforeAll(async () => {
    certs = await mkdtemp(join(tmpdir(), "af-tls-"));
    const tls = await makeDockerTls(certs);
    ({ engine: remote } = await sandboxEngine({ tls }));
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
});
