/**
 * The Docker sandbox against a hostile agent and a hostile setup (real Docker, production limits where
 * the case needs them): the helper shells cannot be driven through /proc, setup's network reaches the
 * registries but not the worker's host, the workspace has a size limit, and a fork bomb is gone when
 * its command times out.
 */

import { readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DockerSandbox, DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { SandboxError } from "../../../../src/shared/errors.js";
import { describeInOrder } from "../../../support/describe-in-order.js";
import { makeSourceDir } from "../../../support/sandbox-contract.js";
import { INJECT_EVERYWHERE } from "../../../support/sandbox-hardening.js";
import { requireSandboxImage } from "../../../support/services.js";

const available = await requireSandboxImage();
const docker = new Docker();

// Each test and suite below has its own sandbox: they run side by side, one's waits (timeouts, blocked
// connections) overlapping the others' (describeInOrder: the tests sharing a sandbox stay in order).
describe.runIf(available).concurrent("docker sandbox hardening", () => {
  let source: string;
  beforeAll(async () => {
    source = await makeSourceDir();
  });
  afterAll(async () => {
    if (source) await rm(source, { recursive: true, force: true });
  });

  it("the control and file shells cannot be driven: commands written into /proc/PID/fd/0 run nowhere", async () => {
    const sandbox = (await new DockerSandboxProvider().create({
      sourceDir: source,
      jobId: "hardening-inject",
    })) as DockerSandbox;
    try {
      // The file shell attaches after the sandbox is ready; a read waits for it, so the attack meets it.
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n");
      const attack = await sandbox.exec(INJECT_EVERYWHERE);
      const lines = attack.output.trim().split("\n");
      // The shells the worker drives are the other bash processes; none took the line.
      const shells = lines.filter((l) => / bash$/.test(l));
      expect(shells.filter((l) => l.startsWith("wrote"))).toEqual([]);
      expect(shells.length).toBeGreaterThanOrEqual(2);
      // The worker goes on using them: reads, writes, a timeout (the killer), reads again.
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n");
      await sandbox.writeFile("written.txt", "by the worker\n");
      expect((await sandbox.exec("sleep 30", { timeoutMs: 1000 })).timedOut).toBe(true);
      expect((await sandbox.readFile("written.txt")).toString()).toBe("by the worker\n");
      const listing = await sandbox.exec("ls /workspace");
      expect(listing.output.split("\n").filter((f) => f.startsWith("pwned"))).toEqual([]);
    } finally {
      await sandbox.dispose();
    }
  });

  it("a fork bomb at the production limits is gone when its command times out: the next command answers alone", async () => {
    const sandbox = (await new DockerSandboxProvider().create({
      sourceDir: source,
      jobId: "hardening-forkbomb",
    })) as DockerSandbox;
    try {
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n"); // the file shell attached
      const started = performance.now();
      const bomb = await sandbox.exec(":(){ :|:& };:; sleep 600", { timeoutMs: 5000 });
      const returned = performance.now();
      expect(bomb.timedOut).toBe(true);
      const next = await sandbox.exec("echo usable; ps -e --no-headers -o comm");
      const answered = performance.now();
      console.log(
        `fork bomb: result ${Math.round(returned - started - 5000)} ms after the timeout, next command answered ${Math.round(answered - started - 5000)} ms after it`,
      );
      const [first, ...processes] = next.output.trim().split("\n");
      // Nothing of the bomb is left to write into the next command's output, or to run.
      expect(first).toBe("usable");
      expect(processes.sort()).toEqual(["bash", "bash", "bash", "docker-init", "ps", "sleep"]);
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n");
    } finally {
      await sandbox.dispose();
    }
  }, 600_000);

  describeInOrder("workspace size limit", () => {
    let sandbox: DockerSandbox;
    beforeAll(async () => {
      sandbox = (await new DockerSandboxProvider({ workspaceSize: "32m" }).create({
        sourceDir: source,
        jobId: "hardening-workspace-size",
      })) as DockerSandbox;
    });
    afterAll(async () => {
      await sandbox?.dispose();
    });

    it("stops a command that fills it, and tells the agent so", async () => {
      const r = await sandbox.exec(
        "head -c 100M /dev/zero > big.bin; s=$?; du -k big.bin | cut -f1; exit $s",
      );
      expect(r.exitCode).not.toBe(0);
      expect(r.output).toContain("No space left on device");
      expect(r.output).toContain("[the workspace is full: it holds at most 32 MB;");
      const kb = Number(r.output.split("\n").find((l) => /^\d+$/.test(l)));
      expect(kb).toBeLessThanOrEqual(32 * 1024);
    });

    it("refuses a file write while full with its own code, and works again once space is freed", async () => {
      const error = await sandbox.writeFile("more.bin", Buffer.alloc(4 * 1024 ** 2, 1)).catch((e) => e);
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).code).toBe("workspace_full");
      expect((error as SandboxError).message).toContain("32 MB");
      expect((await sandbox.exec("rm big.bin more.bin; echo freed")).output).toContain("freed");
      await sandbox.writeFile("more.bin", Buffer.alloc(4 * 1024 ** 2, 1));
      expect((await sandbox.exec("stat -c %s more.bin")).output).toBe(`${4 * 1024 ** 2}\n`);
    });

    it("refuses a size that is not one", () => {
      expect(() => new DockerSandboxProvider({ workspaceSize: "lots" })).toThrow(
        /invalid workspace size: lots/,
      );
    });
  });

  describeInOrder("setup's network", () => {
    let sandbox: DockerSandbox;
    let server: Server;
    let port: number;
    const hits: string[] = [];

    beforeAll(async () => {
      // A service of the worker's host, on every address (as the app's /healthz and Redis were).
      server = createServer((req, res) => {
        hits.push(req.url ?? "");
        res.end("host service\n");
      });
      await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
      port = (server.address() as AddressInfo).port;
      sandbox = (await new DockerSandboxProvider().create({
        sourceDir: source,
        jobId: "hardening-network",
        network: true,
      })) as DockerSandbox;
    });
    afterAll(async () => {
      await sandbox?.dispose();
      await new Promise((resolve) => server?.close(resolve));
    });

    const tcp = (host: string, p: number) =>
      `timeout 10 bash -c 'exec 3<>/dev/tcp/${host}/${p}' 2>&1 && echo "connected ${host}" || echo "blocked ${host}"`;

    it("reaches neither the host (gateway, its own addresses) nor link-local or private ranges", async () => {
      const info = await docker.getContainer(sandbox.id).inspect();
      const networks = Object.entries(info.NetworkSettings.Networks);
      const gateway = networks[0]![1].Gateway;
      const hostIps = Object.values(os.networkInterfaces())
        .flat()
        .filter((a) => a?.family === "IPv4" && !a.internal)
        .map((a) => a!.address);
      const targets = [gateway, ...hostIps];
      const r = await sandbox.exec(
        [
          ...targets.map((ip) => tcp(ip, port)),
          tcp("169.254.169.254", 80),
          tcp("10.0.0.1", 80),
          tcp("192.168.0.1", 80),
        ].join("; "),
        { timeoutMs: 120_000 },
      );
      for (const ip of [...targets, "169.254.169.254", "10.0.0.1", "192.168.0.1"])
        expect(r.output).toContain(`blocked ${ip}`);
      expect(r.output).not.toContain("connected");
      expect(r.output).toContain("No route to host");
      // And no IPv6 to go round the rules.
      expect((await sandbox.exec("cat /proc/sys/net/ipv6/conf/all/disable_ipv6")).output).toBe("1\n");
      expect(hits).toEqual([]);
      // The network itself keeps containers apart.
      expect(networks.map(([name]) => name)).toEqual(["agent-fix-setup"]);
      const network = await docker.getNetwork("agent-fix-setup").inspect();
      expect(network.Options?.["com.docker.network.bridge.enable_icc"]).toBe("false");
    }, 180_000);

    it("reaches the npm registry and Debian's mirror by name", async () => {
      // The host's CA bundle, for a network whose HTTPS goes through an intercepting proxy (as here).
      const bundle = await readFile("/etc/ssl/certs/ca-certificates.crt").catch(() => undefined);
      if (bundle) await sandbox.writeFile(".ca.pem", bundle);
      const extraCa = bundle ? "NODE_EXTRA_CA_CERTS=/workspace/.ca.pem " : "";
      const get = (url: string) =>
        `${extraCa}node -e "fetch('${url}').then(r => console.log(r.status, '${url}'), e => console.log('failed', e.cause?.code ?? e.message))"`;
      const r = await sandbox.exec(
        [
          get("https://registry.npmjs.org/left-pad"),
          get("https://deb.debian.org/debian/dists/bookworm/Release"),
        ].join("; "),
        { timeoutMs: 90_000 },
      );
      expect(r.output).toContain("200 https://registry.npmjs.org/left-pad");
      expect(r.output).toContain("200 https://deb.debian.org/debian/dists/bookworm/Release");
    });

    it("setup's uid 1000 holds no capability though NET_ADMIN is in the bounding set, and cannot lift the rules", async () => {
      const r = await sandbox.exec(
        "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; iptables -F OUTPUT 2>&1 || echo flush-refused; setpriv --reuid=0 true 2>&1 || echo setuid-refused",
      );
      const field = (name: string) => new RegExp(`^${name}:\\s*([0-9a-f]+)$`, "m").exec(r.output)?.[1];
      for (const name of ["CapInh", "CapPrm", "CapEff", "CapAmb"])
        expect(field(name), name).toBe("0000000000000000");
      const NET_ADMIN = 12n;
      expect((BigInt(`0x${field("CapBnd")}`) >> NET_ADMIN) & 1n).toBe(1n);
      expect(r.output).toMatch(/^NoNewPrivs:\s*1$/m);
      expect(r.output).toContain("flush-refused");
      expect(r.output).toContain("setuid-refused");
      // Still blocked after the attempt.
      const again = await sandbox.exec(tcp("169.254.169.254", 80), { timeoutMs: 30_000 });
      expect(again.output).toContain("blocked 169.254.169.254");
    });

    it("reaches an address the operator allows (a private registry) though it is denied by default, and no other", async () => {
      const hostIp = Object.values(os.networkInterfaces())
        .flat()
        .find((a) => a?.family === "IPv4" && !a.internal)!.address;
      const allowed = await new DockerSandboxProvider({ setupNetwork: { allow: [`${hostIp}/32`] } }).create({
        sourceDir: source,
        jobId: "hardening-network-allow",
        network: true,
      });
      try {
        const r = await allowed.exec(`${tcp(hostIp, port)}; ${tcp("169.254.169.254", 80)}`, {
          timeoutMs: 60_000,
        });
        expect(r.output).toContain(`connected ${hostIp}`);
        expect(r.output).toContain("blocked 169.254.169.254");
      } finally {
        await allowed.dispose();
      }
      expect(() => new DockerSandboxProvider({ setupNetwork: { allow: ["registry.internal"] } })).toThrow(
        /invalid CIDR in the setup network's allow list: registry.internal/,
      );
    });

    it("the agent after setup has no network at all", async () => {
      await sandbox.setNetwork(false);
      expect((await sandbox.exec("ls /sys/class/net")).output).toBe("lo\n");
    });
  });
});
