/**
 * gVisor as the sandboxes' runtime (AGENT_FIX_SANDBOX_RUNTIME=runsc), on a private engine configured
 * with runsc as docs/operating.md says (ptrace platform, no network of its own), the slim sandbox image
 * loaded into it once for the file. runsc must run here: nothing skips when it cannot (no KVM is needed,
 * but ptrace must be allowed), so CI fails with runsc's own words. First the sandbox alone (gVisor's
 * kernel, uid 1000, no capabilities, no network, the hardening identical to runc's, the shells'
 * timeouts and kills), a devcontainer build step under runsc, then a worker refusing a runtime its
 * engine lacks, then label -> draft PR with every container of the run under runsc.
 */
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DockerSandbox, DockerSandboxProvider, LABEL } from "../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE } from "../../sandbox/version.js";
import { type OwnDockerd, RUNSC_RUNTIME } from "../support/own-dockerd.js";
import { makeSourceDir } from "../support/sandbox-contract.js";
import { sandboxEngine } from "../support/sandbox-engine.js";
import { INJECT_EVERYWHERE, sandboxHardening } from "../support/sandbox-hardening.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { childOutput, waitFor } from "../support/stack-parts.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("sandboxes under gVisor (runsc)", () => {
  let engine: OwnDockerd;
  const stack = new Stack({ model: null, worker: false });
  let source = "";
  beforeAll(async () => {
    const [started] = await Promise.all([
      sandboxEngine({ runtimes: { runsc: RUNSC_RUNTIME } }),
      stack.start(),
    ]);
    engine = started.engine;
    console.log(`[gvisor] loading the slim sandbox image into the private engine took ${started.loadMs} ms`);
    source = await makeSourceDir();
  }, 600_000);
  afterAll(async () => {
    await stack.stop();
    await engine?.remove();
    if (source) await rm(source, { recursive: true, force: true });
  });

  it("a sandbox runs on gVisor's kernel as uid 1000, no capabilities, no network; its shells time out and kill", async () => {
    const provider = new DockerSandboxProvider({ docker: engine.docker, runtime: "runsc" });
    const runc = new DockerSandboxProvider({ docker: engine.docker });
    const sandbox = (await provider.create({ sourceDir: source, jobId: "gvisor" })) as DockerSandbox;
    const plain = (await runc.create({ sourceDir: source, jobId: "gvisor-runc" })) as DockerSandbox;
    try {
      // gVisor's own boot lines (runc shows the host's kernel log, or nothing to uid 1000).
      const dmesg = await sandbox.exec("dmesg");
      expect(dmesg.output).toContain("Starting gVisor");
      expect((await plain.exec("dmesg 2>&1")).output).not.toContain("Starting gVisor");
      const who = await sandbox.exec(
        "id -u; grep -E '^Cap(Prm|Eff)' /proc/self/status; echo /sys/class/net/*",
      );
      expect(who.output.trim().split("\n")).toEqual([
        "1000",
        "CapPrm:\t0000000000000000",
        "CapEff:\t0000000000000000",
        "/sys/class/net/lo",
      ]);
      expect(
        (await sandbox.exec("python3 -c 'import socket; socket.create_connection((\"10.0.0.1\", 80), 2)'"))
          .exitCode,
      ).not.toBe(0);
      // The file shell runs the image's bash under gVisor (it cannot exec execute-only copies): the
      // agent's uid still cannot write commands into any shell's stdin through /proc. It attaches after
      // the sandbox is ready: a read waits for it, so the attack meets it.
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n");
      const attack = await sandbox.exec(INJECT_EVERYWHERE);
      const shells = attack.output.split("\n").filter((l) => / bash$/.test(l));
      expect(shells.length, attack.output).toBeGreaterThanOrEqual(2);
      expect(shells.filter((l) => l.startsWith("wrote"))).toEqual([]);
      expect((await sandbox.exec("echo /workspace/pwned*")).output.trim()).toBe("/workspace/pwned*");
      // The shells: a command, a timeout (the control shell kills it), the files still there after.
      expect((await sandbox.exec("cat a.txt")).output).toBe("hello\n");
      const slow = await sandbox.exec("sleep 30", { timeoutMs: 1000 });
      expect(slow).toMatchObject({ timedOut: true, exitCode: 137 });
      const tree = await sandbox.exec("sleep 30 & sleep 30 & wait", { timeoutMs: 1000 });
      expect(tree.timedOut).toBe(true);
      expect((await sandbox.exec("pgrep -u 1000 -f '^sleep 30' | wc -l")).output.trim()).toBe("0");
      await sandbox.writeFile("written.txt", "by the worker\n");
      expect((await sandbox.readFile("written.txt")).toString()).toBe("by the worker\n");
      // The same hardening as under runc; only the runtime differs.
      const gvisor = await sandboxHardening(engine.docker, sandbox.id);
      const native = await sandboxHardening(engine.docker, plain.id);
      expect(gvisor.runtime).toBe("runsc");
      expect(native.runtime).toBe("runc");
      expect(gvisor.hardening).toEqual(native.hardening);
      expect(gvisor.hardening.network).toBe("none");
    } finally {
      await sandbox.dispose();
      await plain.dispose();
    }
  }, 120_000);

  it("a devcontainer's build steps run under runsc too", async () => {
    const provider = new DockerSandboxProvider({ docker: engine.docker, runtime: "runsc" });
    try {
      const image = await provider.repoImage({
        root: source,
        context: ".",
        dockerfile: `FROM ${SANDBOX_IMAGE}\nUSER 0:0\nRUN dmesg > /gvisor-boot.txt\n`,
        bases: [SANDBOX_IMAGE],
        name: "octo/gvisor-build",
      });
      const sandbox = await provider.create({ sourceDir: source, jobId: "gvisor-build", image });
      try {
        expect((await sandbox.exec("cat /gvisor-boot.txt")).output).toContain("Starting gVisor");
      } finally {
        await sandbox.dispose();
      }
    } finally {
      await provider.close();
    }
  }, 120_000);

  it("a worker whose runtime the engine lacks refuses to start, naming the engine's runtimes and daemon.json", async () => {
    const child = stack.spawnWorker({
      DOCKER_HOST: engine.host,
      AGENT_FIX_WORKER_TAG: stack.prefix,
      AGENT_FIX_SANDBOX_RUNTIME: "kata",
    });
    const text = childOutput(child);
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(text()).toContain(
      "AGENT_FIX_SANDBOX_RUNTIME=kata, but the Docker engine has no runtime of that name (docker info: ",
    );
    expect(text()).toMatch(/docker info: .*runc.*runsc/);
    expect(text()).toContain("/etc/docker/daemon.json");
  }, 120_000);

  it("label -> draft PR with the agent's, the baseline's and the gate's sandboxes under runsc", async () => {
    const repo = await stack.addSampleRepo("gvisor", sampleConfig("sample-median.jsonl"));
    const issue = stack.addIssue(repo);
    const seen = new Map<string, string>();
    const events = await engine.docker.getEvents({ filters: { type: ["container"], event: ["create"] } });
    events.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        const event = JSON.parse(line) as { id: string };
        void engine.docker
          .getContainer(event.id)
          .inspect()
          .then((info) =>
            seen.set(event.id, `${info.Config.Labels?.[LABEL.job] ?? "?"} ${info.HostConfig.Runtime}`),
          )
          .catch(() => undefined);
      }
    });
    const child = stack.spawnWorker({
      DOCKER_HOST: engine.host,
      AGENT_FIX_WORKER_TAG: stack.prefix,
      AGENT_FIX_SANDBOX_RUNTIME: "runsc",
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
      const runtimes = [...seen.values()];
      console.log(`[gvisor] the run's containers: ${runtimes.join(", ")}`);
      // setup (no network here), baseline, agent, gate at least: all of them under runsc.
      expect(runtimes.length).toBeGreaterThanOrEqual(3);
      expect(runtimes.filter((r) => !r.endsWith(" runsc"))).toEqual([]);
    } finally {
      (events as unknown as { destroy(): void }).destroy();
      child.kill("SIGTERM");
    }
  }, 400_000);
});
