import { spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import os from "node:os";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DockerSandbox, DockerSandboxProvider, LABEL } from "../../../../sandbox/docker/provider.js";
import { reapSandboxes, workerAliveOnThisHost } from "../../../../sandbox/docker/reaper.js";
import type { Sandbox } from "../../../../src/shared/contracts.js";
import { SandboxError } from "../../../../src/shared/errors.js";
import { describeInOrder } from "../../../support/describe-in-order.js";
import {
  CONTRACT_MAX_OUTPUT_CHARS,
  makeSourceDir,
  sandboxContract,
} from "../../../support/sandbox-contract.js";
import { requireSandboxImage } from "../../../support/services.js";

const available = await requireSandboxImage();
const docker = new Docker();

async function exists(kind: "container" | "volume", name: string): Promise<boolean> {
  try {
    if (kind === "container") await docker.getContainer(name).inspect();
    else await docker.getVolume(name).inspect();
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

async function leftovers(sandbox: Sandbox): Promise<string[]> {
  const left: string[] = [];
  if (await exists("container", sandbox.id)) left.push(`container ${sandbox.id}`);
  if (await exists("volume", sandbox.id)) left.push(`volume ${sandbox.id}`);
  return left;
}

// Each suite below has its own sandboxes: they run side by side, one's waits on timeouts and container
// starts overlapping the others' (describeInOrder: the tests of a suite sharing a sandbox stay in order).
describe.runIf(available)("docker driver", () => {
  describeInOrder("contract", () =>
    sandboxContract({
      name: "docker",
      provider: () => new DockerSandboxProvider({ maxOutputChars: CONTRACT_MAX_OUTPUT_CHARS }),
      leftovers,
    }),
  );

  describeInOrder("contract, workspace on tmpfs", () =>
    sandboxContract({
      name: "docker, workspace on tmpfs",
      provider: () =>
        new DockerSandboxProvider({ maxOutputChars: CONTRACT_MAX_OUTPUT_CHARS, workspaceSize: "256m" }),
      leftovers,
    }),
  );

  describe.concurrent("workspace on tmpfs", () => {
    it("keeps /workspace in memory with the size asked for, owned by the sandbox user", async () => {
      const source = await makeSourceDir();
      const sandbox = await new DockerSandboxProvider({ workspaceSize: "64m" }).create({
        sourceDir: source,
        jobId: "tmpfs-workspace",
      });
      try {
        const r = await sandbox.exec(
          "stat -f -c %T .; df -k --output=size . | tail -1; stat -c %u .; cat a.txt",
        );
        const [fsType, sizeKb, owner, content] = r.output.trim().split("\n");
        expect(fsType).toBe("tmpfs");
        expect(Number(sizeKb)).toBe(64 * 1024);
        expect(owner).toBe("1000");
        expect(content).toBe("hello");
        // Where the start-up time went, for the benchmark: every phase, none after "ready".
        const phases = (sandbox as DockerSandbox).startupPhases;
        for (const phase of [
          "container_created",
          "attached",
          "started",
          "sent",
          "copied",
          "control_shell",
          "agent_shell",
        ]) {
          expect(phases[phase], phase).toBeGreaterThan(0);
          expect(phases[phase]!, phase).toBeLessThanOrEqual(phases.ready!);
        }
      } finally {
        await sandbox.dispose();
        await rm(source, { recursive: true, force: true });
      }
      expect(await leftovers(sandbox)).toEqual([]);
    });

    it("refuses a size that is not one", () => {
      let error: unknown;
      try {
        new DockerSandboxProvider({ workspaceSize: "lots" });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).code).toBe("invalid_argument");
      expect((error as SandboxError).message).toContain("lots");
    });
  });

  describeInOrder("isolation", () => {
    const FAKE_TOKEN = "ghs_FAKE_worker_token_must_not_leak_0123456789";
    let source: string;
    let sandbox: DockerSandbox;

    beforeAll(async () => {
      process.env.AGENT_FIX_TEST_FAKE_TOKEN = FAKE_TOKEN;
      source = await makeSourceDir();
      const provider = new DockerSandboxProvider({
        limits: { memoryBytes: 256 * 1024 ** 2, pids: 128, cpus: 0.5 },
        workspaceSize: "64m",
      });
      sandbox = (await provider.create({
        sourceDir: source,
        jobId: "isolation-test",
        env: { ALLOWED_VAR: "visible" },
      })) as DockerSandbox;
    });
    afterAll(async () => {
      delete process.env.AGENT_FIX_TEST_FAKE_TOKEN;
      await sandbox?.dispose();
      if (source) await rm(source, { recursive: true, force: true });
    });

    it("runs as uid 1000 without capabilities, without new privileges, on a read-only root, with the limits and labels", async () => {
      const r = await sandbox.exec(
        "id -u; id -g; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; touch /etc/x 2>/dev/null || echo read-only; touch ~/ok /tmp/ok && echo writable; stat -c %u /workspace /workspace/a.txt",
      );
      expect(r.output).toBe(
        "1000\n1000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nread-only\nwritable\n1000\n1000\n",
      );
      const info = await docker.getContainer(sandbox.id).inspect();
      expect(info.HostConfig.NetworkMode).toBe("none");
      expect(info.HostConfig.CapDrop).toEqual(["ALL"]);
      // The bounding set of the root control shell; without a network, no NET_ADMIN.
      expect(info.HostConfig.CapAdd).toEqual(["KILL", "SETUID", "SETGID", "SYS_NICE"]);
      expect(info.HostConfig.SecurityOpt).toEqual(["no-new-privileges"]);
      // The processes' limit plus the workspace's (a tmpfs volume: its pages are memory).
      expect(info.HostConfig.Memory).toBe((256 + 64) * 1024 ** 2);
      expect(info.HostConfig.MemorySwap).toBe((256 + 64) * 1024 ** 2);
      expect(info.HostConfig.PidsLimit).toBe(128);
      expect(info.HostConfig.NanoCpus).toBe(0.5e9);
      expect(info.HostConfig.Init).toBe(true);
      // Root only for the control shell's execs: the main process itself runs as uid 1000.
      expect(info.Config.User).toBe("0:0");
      const main = await sandbox.exec("stat -c %U /proc/$(pgrep -x sleep)");
      expect(main.output).toBe("agent\n");
      expect(info.Config.Labels[LABEL.job]).toBe("isolation-test");
      expect(info.Config.Labels[LABEL.worker]).toBe(`${os.hostname()}:${process.pid}`);
      expect(Number(info.Config.Labels[LABEL.created])).toBeGreaterThan(Date.now() - 3_600_000);
      const volume = await docker.getVolume(sandbox.id).inspect();
      expect(volume.Labels?.[LABEL.job]).toBe("isolation-test");
      expect(sandbox.image).toMatch(/^agent-fix-sandbox:\d+\.\d+\.\d+/);
    });

    it("has no network: only the loopback interface, and a connection attempt fails", async () => {
      // Checked first, so that nothing is sent anywhere if the isolation were broken.
      const interfaces = await sandbox.exec("ls /sys/class/net");
      expect(interfaces.output).toBe("lo\n");
      const attempt = await sandbox.exec(
        "timeout 5 bash -c 'exec 3<>/dev/tcp/192.0.2.1/80' && echo connected",
        {
          timeoutMs: 10_000,
        },
      );
      expect(attempt.exitCode).not.toBe(0);
      expect(attempt.output).toContain("Network is unreachable");
      expect(attempt.output).not.toContain("connected");
    });

    it("does not see the worker's environment, in the shell or in /proc/1/environ; sees the allow-list", async () => {
      expect(process.env.AGENT_FIX_TEST_FAKE_TOKEN).toBe(FAKE_TOKEN);
      const env = await sandbox.exec(
        "env; echo; tr '\\0' '\\n' < /proc/1/environ; for p in /proc/[0-9]*/environ; do cat $p 2>/dev/null; done | tr '\\0' '\\n'",
      );
      expect(env.output).not.toContain(FAKE_TOKEN);
      expect(env.output).not.toContain("AGENT_FIX_TEST_FAKE_TOKEN");
      expect(env.output).toContain("ALLOWED_VAR=visible");
      expect(env.output).toContain("HOME=/home/agent");
      // Nothing else of the worker's environment either (the fixed safe variables aside).
      const fixed = new Set(
        env.output
          .split("\n")
          .filter((l) => /^[A-Z_]+=/.test(l))
          .map((l) => l.split("=")[0]),
      );
      const allowed = [
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TERM",
        "USER",
        "PAGER",
        "GIT_PAGER",
        "GIT_TERMINAL_PROMPT",
        "NO_COLOR",
        "PYTHONUNBUFFERED",
        "DEBIAN_FRONTEND",
        "HOSTNAME",
        "PWD",
        "SHLVL",
        "_",
        "ALLOWED_VAR",
        "OLDPWD",
      ];
      expect([...fixed].filter((name) => !allowed.includes(name!))).toEqual([]);
    });

    it("a write that fails inside the workspace says why, and the control shell stays in step", async () => {
      expect((await sandbox.exec("mkdir -p locked && chmod 555 locked")).exitCode).toBe(0);
      const content = Buffer.from("echo LEAKED\n".repeat(20_000));
      const error = await sandbox.writeFile("locked/f.txt", content).catch((e) => e);
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).code).toBe("io_error");
      expect((error as SandboxError).message).toMatch(/Permission denied/);
      const mkdirError = await sandbox.writeFile("locked/deeper/f.txt", "x").catch((e) => e);
      expect((mkdirError as SandboxError).code).toBe("io_error");
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n");
      await sandbox.writeFile("after.txt", "fine\n");
      expect((await sandbox.exec("cat after.txt; ls locked | wc -l")).output).toBe("fine\n0\n");
      await sandbox.exec("chmod 755 locked && rm -rf locked after.txt");
    });

    it("contains a fork bomb: the result comes back and the sandbox stays usable", async () => {
      const r = await sandbox.exec(":(){ :|:& };:; sleep 600", { timeoutMs: 5000 });
      expect(r.timedOut).toBe(true);
      expect(r.exitCode).toBe(137);
      const after = await sandbox.exec("echo usable; ps -e --no-headers | wc -l");
      expect(after.output.split("\n")[0]).toBe("usable");
      // docker-init, sleep, three shells, ps, wc
      expect(Number(after.output.split("\n")[1])).toBeLessThanOrEqual(8);
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n");
      await sandbox.exec("unset -f :");
    });

    it("ends a memory hog as a result: killed, out of memory", async () => {
      const r = await sandbox.exec("python3 -c \"x = b'x' * (1024 ** 3); print('survived')\"", {
        timeoutMs: 60_000,
      });
      expect(r.oomKilled).toBe(true);
      expect(r.exitCode).toBe(137);
      expect(r.timedOut).toBe(false);
      expect(r.output).not.toMatch(/^survived$/m);
      const after = await sandbox.exec("echo fine");
      expect(after.output).toBe("fine\n");
      expect(after.oomKilled).toBe(false);
    });

    it("cuts the network of a sandbox started with it", async () => {
      const provider = new DockerSandboxProvider();
      const online = await provider.create({ sourceDir: source, jobId: "network-test", network: true });
      try {
        expect((await online.exec("ls /sys/class/net")).output).toContain("eth0");
        await online.setNetwork(false);
        expect((await online.exec("ls /sys/class/net")).output).toBe("lo\n");
        await online.setNetwork(true);
        expect((await online.exec("ls /sys/class/net")).output).toMatch(/^eth\d+$/m);
        await online.setNetwork(false);
        expect((await online.exec("ls /sys/class/net")).output).toBe("lo\n");
      } finally {
        await online.dispose();
      }
    });
  });

  describe.concurrent("reaper", () => {
    it("removes the container and volume of a worker that is gone, and leaves live ones", async () => {
      // A worker id of another host: a reaper running elsewhere (another test run) leaves it alone.
      const goneWorker = `gone-host-${process.pid}-${Date.now()}:1`;
      const source = await makeSourceDir();
      const [orphan, live] = await Promise.all([
        new DockerSandboxProvider({ workerId: goneWorker }).create({ sourceDir: source, jobId: "orphan" }),
        new DockerSandboxProvider().create({ sourceDir: source, jobId: "live" }),
      ]);
      try {
        const result = await reapSandboxes({
          isWorkerAlive: (worker) => worker !== goneWorker && workerAliveOnThisHost(worker),
        });
        expect(result.containers).toContain(orphan.id);
        expect(result.volumes).toContain(orphan.id);
        expect(await leftovers(orphan)).toEqual([]);
        expect(result.containers).not.toContain(live.id);
        expect((await live.exec("echo alive")).output).toBe("alive\n");
      } finally {
        await Promise.all([orphan.dispose(), live.dispose()]);
        await rm(source, { recursive: true, force: true });
      }
    });

    it("judges a worker on this host by its pid", () => {
      const deadPid = spawnSync("true").pid!;
      expect(workerAliveOnThisHost(`${os.hostname()}:${process.pid}`)).toBe(true);
      expect(workerAliveOnThisHost(`${os.hostname()}:${deadPid}`)).toBe(false);
      expect(workerAliveOnThisHost("another-host:1")).toBe(true);
    });
  });
});
