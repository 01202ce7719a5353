import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../../../sandbox/docker/kept-environments.js";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import type { Sandbox } from "../../../../src/shared/contracts.js";
import { metrics } from "../../../../src/shared/metrics/registry.js";
import { meteredSandboxes } from "../../../../worker/metrics.js";
import { operatorTree } from "../../../../worker/run/checkout/trusted-tree.js";
import { prepareTree } from "../../../../worker/run/prepare/prepare-tree.js";
import { RunSandboxes } from "../../../../worker/run/prepare/run-sandboxes.js";
import { committedRepository } from "../../../support/committed-repo.js";
import { repositoryNamed } from "../../../support/repository-identity.js";
import { sandboxHardening } from "../../../support/sandbox-hardening.js";
import { requireSandboxImage } from "../../../support/services.js";
import { waitFor } from "../../../support/stack-parts.js";

// Real Docker: sandboxes of a kept environment leave a standby that the next sandbox of it takes.
const ready = await requireSandboxImage();
const STORE = `agent-fix-kept-standby-${process.pid}`;
const WORKER = `standby-test-${process.pid}`;
const provider = new DockerSandboxProvider({
  workerId: WORKER,
  keptEnvironments: { name: STORE, maxSize: "20g" },
  standby: { max: 2, idleMs: 600_000 },
});
const roots: string[] = [];

afterAll(async () => {
  await provider.close();
  const images = await provider.docker.listImages({
    filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${STORE}`] }),
  });
  for (const { Id } of images) await provider.docker.getImage(Id).remove({ force: true });
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** A repository of `name` prepared by a setup that writes deps/lib.txt, its environment kept. */
async function prepared(name: string, files: Record<string, string> = {}) {
  const root = await mkdtemp(join(tmpdir(), "af-standby-"));
  roots.push(root);
  const all = { ".gitignore": "deps/\n", "requirements.txt": "left-pad==1\n", "app.txt": "v1\n", ...files };
  const repo = await committedRepository(root, all);
  const sandboxes = new RunSandboxes(meteredSandboxes(provider), { jobId: `standby-${name}` });
  const tree = await prepareTree({
    sandboxes,
    trusted: operatorTree(repo.dir, repo.head),
    root: await mkdtemp(join(root, "run-")),
    setup: { commands: [`mkdir -p deps && echo ${name} > deps/lib.txt`], network: false, timeoutMs: 120_000 },
    secrets: {},
    repository: repositoryNamed(name),
  });
  return { sandboxes, dir: tree.dir };
}

/** Sandboxes the tests took: a standby keeps its `standby` job label once taken. */
const taken = new Set<string>();

/** This provider's standby containers not taken yet (running or not). */
async function standbyContainers() {
  const all = await provider.docker.listContainers({
    all: true,
    filters: { label: [`agent-fix.worker=${WORKER}`, "agent-fix.job=standby"] },
  });
  return all.filter((c) => !taken.has(c.Names[0]?.replace(/^\//, "") ?? ""));
}

function fromStandby(sandbox: Sandbox): boolean {
  taken.add(sandbox.id);
  return "standby" in (sandbox.startupPhases ?? {});
}

async function output(sandbox: Sandbox, command: string): Promise<string> {
  return (await sandbox.exec(command, { timeoutMs: 30_000 })).output.trim();
}

/** Docker sandbox starts the metrics counted as served by a standby (`from=standby`) or not. */
async function startsCounted(from: "standby" | "fresh"): Promise<number> {
  const { values } = await metrics.sandboxStarts.get();
  return values.find((v) => v.labels.driver === "docker" && v.labels.from === from)?.value ?? 0;
}

describe.runIf(ready)("standby sandboxes of kept environments", () => {
  it("the next sandbox takes the standby: the kept files and the checkout in place, hardened the same, nothing of the sandbox before it", async () => {
    const { sandboxes, dir } = await prepared("octo/one");
    const first = await sandboxes.start(dir);
    expect(fromStandby(first)).toBe(false);
    // Two of its kind (the pool's size): a run asks for several at once.
    await waitFor("the standbys", async () => (await standbyContainers()).length === 2, 60_000);
    // Hostile: what the first sandbox's agent leaves behind must not reach the next one.
    await output(
      first,
      "echo planted > /tmp/planted; echo 'echo pwned' >> ~/.bashrc; echo planted > planted.txt; (sleep 900 &)",
    );
    const counted = { standby: await startsCounted("standby"), fresh: await startsCounted("fresh") };
    const second = await sandboxes.start(dir);
    expect(fromStandby(second)).toBe(true);
    // The operator sees it: agent_fix_sandbox_starts_total{from="standby"}.
    expect(await startsCounted("standby")).toBe(counted.standby + 1);
    expect(await startsCounted("fresh")).toBe(counted.fresh);
    expect(await output(second, "cat deps/lib.txt app.txt && git status --porcelain")).toBe("octo/one\nv1");
    expect(await output(second, "ls /tmp ~/.bashrc planted.txt 2>&1; pgrep -c -f 'sleep 900'")).toMatch(
      /No such file[\s\S]*No such file[\s\S]*\n0$/,
    );
    expect(await sandboxHardening(provider.docker, second.id)).toEqual(
      await sandboxHardening(provider.docker, first.id),
    );
    // Taken: another one is started for the sandbox after it.
    await waitFor("the next standby", async () => (await standbyContainers()).length === 2, 60_000);
    await sandboxes.disposeAll();
  }, 300_000);

  it("never serves another repository's environment, and a standby that died is not used", async () => {
    const one = await prepared("octo/one", { "app.txt": "v2\n" });
    const two = await prepared("octo/two");
    // octo/one's two standbys are there from the test before; octo/two's environment is another image,
    // whose standby takes the place of one of octo/one's: two kinds in use share the pool.
    const other = await two.sandboxes.start(two.dir);
    expect(fromStandby(other)).toBe(false);
    expect(await output(other, "cat deps/lib.txt")).toBe("octo/two");
    // Two standbys are there at once (octo/one's), so wait for the swap: one of each kind.
    const kinds = async () =>
      (await standbyContainers())
        .map((c) => c.Labels["agent-fix.image"] === one.sandboxes.imageChoice)
        .sort();
    await waitFor("one standby of each kind", async () => (await kinds()).join() === "false,true", 60_000);

    // The engine lost octo/one's standby while it waited: the sandbox starts afresh, and works.
    const ofOne = (await standbyContainers()).filter(
      (c) => c.Labels["agent-fix.image"] === one.sandboxes.imageChoice,
    );
    expect(ofOne).toHaveLength(1);
    await provider.docker.getContainer(ofOne[0]?.Id ?? "").kill();
    const fresh = await one.sandboxes.start(one.dir);
    expect(fromStandby(fresh)).toBe(false);
    expect(await output(fresh, "cat deps/lib.txt app.txt")).toBe("octo/one\nv2");
    await one.sandboxes.dispose(fresh);
    await two.sandboxes.disposeAll();

    await provider.close();
    expect(await standbyContainers()).toEqual([]);
    const after = await one.sandboxes.start(one.dir);
    expect(fromStandby(after)).toBe(false);
    await one.sandboxes.disposeAll();
    expect(await standbyContainers()).toEqual([]);
  }, 400_000);
});

describe.runIf(ready)("standby sandboxes of the shared image", () => {
  const SHARED_WORKER = `standby-shared-${process.pid}`;
  const shared = new DockerSandboxProvider({
    workerId: SHARED_WORKER,
    standby: { max: 2, idleMs: 600_000, sharedImages: true },
  });
  afterAll(() => shared.close());

  /** A checkout of `files` and the run's sandboxes of the default image, as a run without setup has. */
  async function run(name: string, files: Record<string, string>, limits?: { cpus: number }) {
    const root = await mkdtemp(join(tmpdir(), "af-standby-shared-"));
    roots.push(root);
    const repo = await committedRepository(root, files);
    const sandboxes = new RunSandboxes(meteredSandboxes(shared), {
      jobId: `standby-${name}`,
      ...(limits ? { limits } : {}),
    });
    return { sandboxes, dir: repo.dir };
  }

  async function waiting(): Promise<number> {
    const all = await shared.docker.listContainers({
      filters: { label: [`agent-fix.worker=${SHARED_WORKER}`, "agent-fix.job=standby"] },
    });
    return all.filter((c) => !taken.has(c.Names[0]?.replace(/^\//, "") ?? "")).length;
  }

  it("another repository's next sandbox takes it: only its own checkout inside, nothing of the run before, hardened the same", async () => {
    const one = await run("octo/one", { "one.txt": "one\n" });
    const first = await one.sandboxes.start(one.dir);
    expect(fromStandby(first)).toBe(false);
    await waitFor("the standbys of the shared image", async () => (await waiting()) === 2, 60_000);
    // Hostile: what the first run's agent leaves behind must not reach the next run's sandbox.
    await output(first, "echo planted > /tmp/planted; echo 'echo pwned' >> ~/.bashrc; (sleep 900 &)");

    const two = await run("octo/two", { "two.txt": "two\n" });
    const second = await two.sandboxes.start(two.dir);
    expect(fromStandby(second)).toBe(true);
    expect(await output(second, "ls -A | grep -v '^.git$'; git status --porcelain")).toBe("two.txt");
    expect(await output(second, "ls /tmp ~/.bashrc 2>&1; pgrep -c -f 'sleep 900'")).toMatch(
      /No such file[\s\S]*\n0$/,
    );
    expect(await sandboxHardening(shared.docker, second.id)).toEqual(
      await sandboxHardening(shared.docker, first.id),
    );
    await waitFor("the next standby", async () => (await waiting()) === 2, 60_000);

    // Other limits are another kind of sandbox: the standby waits for one like it.
    const three = await run("octo/three", { "three.txt": "three\n" }, { cpus: 0.5 });
    const other = await three.sandboxes.start(three.dir);
    expect(fromStandby(other)).toBe(false);
    await Promise.all([one.sandboxes.disposeAll(), two.sandboxes.disposeAll(), three.sandboxes.disposeAll()]);

    // The worker's stop removes them.
    await shared.close();
    expect(await waiting()).toBe(0);
  }, 300_000);

  it("with sharedImages off, only kept environments get standbys", async () => {
    const keptOnly = new DockerSandboxProvider({
      workerId: SHARED_WORKER,
      standby: { max: 2, idleMs: 600_000 },
    });
    const one = await run("octo/one", { "one.txt": "one\n" });
    const sandboxes = new RunSandboxes(keptOnly, { jobId: "standby-kept-only" });
    try {
      expect(fromStandby(await sandboxes.start(one.dir))).toBe(false);
      expect(fromStandby(await sandboxes.start(one.dir))).toBe(false);
      expect(await waiting()).toBe(0);
    } finally {
      await sandboxes.disposeAll();
      await keptOnly.close();
    }
  }, 300_000);
});
