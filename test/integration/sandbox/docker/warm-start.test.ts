import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KEPT_LABEL } from "../../../../sandbox/docker/kept-environments.js";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE } from "../../../../sandbox/version.js";
import { AgentFixError } from "../../../../src/shared/errors.js";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { operatorTree } from "../../../../worker/run/checkout/trusted-tree.js";
import { prepareTree } from "../../../../worker/run/prepare/prepare-tree.js";
import { RunSandboxes } from "../../../../worker/run/prepare/run-sandboxes.js";
import { createAgentRunner } from "../../../../worker/run/solve/agent-runner.js";
import { committedRepository } from "../../../support/committed-repo.js";
import { turn } from "../../../support/replay-turns.js";
import { repositoryNamed } from "../../../support/repository-identity.js";
import { requireSandboxImage } from "../../../support/services.js";

// Real Docker: setup's container kept as an image of this test's own store, found again by key.
const ready = await requireSandboxImage();
const STORE = `agent-fix-kept-test-${process.pid}`;
const provider = new DockerSandboxProvider({ keptEnvironments: { name: STORE, maxSize: "20g" } });
const roots: string[] = [];

/** A repository committed in a temp dir: `deps/` ignored, a requirements file as its manifest. */
async function repository(
  files: Record<string, string>,
): Promise<{ dir: string; root: string; head: string }> {
  const root = await mkdtemp(join(tmpdir(), "af-warm-"));
  roots.push(root);
  const all = { ".gitignore": "deps/\n", "requirements.txt": "left-pad==1\n", "app.txt": "v1\n", ...files };
  return { root, ...(await committedRepository(root, all)) };
}

async function prepare(
  repo: { dir: string; root: string; head: string },
  options: {
    commands: string[];
    user?: "agent" | "root";
    repository?: string;
    secrets?: Record<string, string>;
    provider?: DockerSandboxProvider;
  },
) {
  const sandboxes = new RunSandboxes(options.provider ?? provider, { jobId: "warm-test" });
  const prepared = await prepareTree({
    sandboxes,
    trusted: operatorTree(repo.dir, repo.head),
    root: await mkdtemp(join(repo.root, "run-")),
    setup: { commands: options.commands, network: false, timeoutMs: 120_000, user: options.user ?? "agent" },
    secrets: options.secrets ?? {},
    repository: repositoryNamed(options.repository ?? "octo/warm"),
  });
  return { prepared, sandboxes };
}

async function storeImages(store = STORE): Promise<{ id: string; repository: string }[]> {
  const images = await provider.docker.listImages({
    filters: JSON.stringify({ label: [`${KEPT_LABEL.kept}=${store}`] }),
  });
  return images.map((image) => ({ id: image.Id, repository: image.Labels?.[KEPT_LABEL.repository] ?? "" }));
}

afterAll(async () => {
  const ours = [...(await storeImages()), ...(await storeImages(`${STORE}-lru`))];
  for (const { id } of ours) await provider.docker.getImage(id).remove({ force: true });
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** A command's output in a sandbox started from the prepared tree, as every sandbox of a run starts. */
async function inSandbox(
  { prepared, sandboxes }: Awaited<ReturnType<typeof prepare>>,
  command: string,
): Promise<string> {
  try {
    return await sandboxes.using(prepared.dir, async (sandbox) =>
      (await sandbox.exec(command, { timeoutMs: 30_000 })).output.trim(),
    );
  } finally {
    await sandboxes.disposeAll();
  }
}

const STAMP = "mkdir -p deps && date +%s%N > deps/stamp && echo lib > deps/lib.txt";

// The tests share the store but no environment (each its own setup commands, so its own keys; the LRU
// test its own store), so they run side by side: one's image commit overlaps another's setup.
describe.runIf(ready).concurrent("warm start: the environment setup prepared, kept and found again", () => {
  it("skips setup for the same key with the new checkout's files in place; a changed lockfile, secret or repository prepares anew", async () => {
    // node_modules: a directory the host's tree skips, so its files live in the kept image alone.
    const commands = [STAMP, "mkdir -p node_modules/pkg && echo mod > node_modules/pkg/index.js"];
    const secrets = { REGISTRY_TOKEN: "registry-token-value-1" };
    const first = await prepare(await repository({}), { commands, secrets });
    expect(first.prepared.reused).toBeUndefined();
    const stamp = await readFile(join(first.prepared.dir, "deps/stamp"), "utf8");
    // Kept, its sandboxes start from the kept image, which holds node_modules: the host copy is gone.
    expect(existsSync(join(first.prepared.dir, "node_modules/pkg/index.js"))).toBe(false);
    expect(await inSandbox(first, "cat node_modules/pkg/index.js deps/stamp")).toBe(`mod\n${stamp.trim()}`);

    // Each of the next runs needs only the first one's environment kept, and none another's (their keys
    // differ but for the reuse): they run side by side.
    const reuse = async () => {
      // Same manifests, another commit: setup is skipped, its output is there, the checkout's file is new.
      const second = await prepare(await repository({ "app.txt": "v2\n" }), { commands, secrets });
      expect(second.prepared.reused?.preparedAt).toBeInstanceOf(Date);
      expect(await readFile(join(second.prepared.dir, "deps/stamp"), "utf8")).toBe(stamp);
      expect(await readFile(join(second.prepared.dir, "app.txt"), "utf8")).toBe("v2\n");
      // Nothing under node_modules is unpacked on the host: the sandbox lays it from its image.
      expect(existsSync(join(second.prepared.dir, "node_modules"))).toBe(false);
      expect(await inSandbox(second, "cat node_modules/pkg/index.js deps/stamp app.txt")).toBe(
        `mod\n${stamp.trim()}\nv2`,
      );
      // What setup produced is ignored: the tree that counts is the new commit's own.
      expect(second.prepared.tree).toBe(second.prepared.base.tree);
    };
    // The kept files were scanned for the secrets setup had: another value is another environment.
    const rotate = async () => {
      const rotated = await prepare(await repository({}), {
        commands,
        secrets: { REGISTRY_TOKEN: "registry-token-value-2" },
      });
      expect(rotated.prepared.reused).toBeUndefined();
    };
    const relock = async () => {
      const relocked = await prepare(await repository({ "requirements.txt": "left-pad==2\n" }), {
        commands,
        secrets,
      });
      expect(relocked.prepared.reused).toBeUndefined();
    };
    const elsewhere = async () => {
      const other = await prepare(await repository({}), { commands, secrets, repository: "other/warm" });
      expect(other.prepared.reused).toBeUndefined();
      expect(await readFile(join(other.prepared.dir, "deps/stamp"), "utf8")).not.toBe(stamp);
    };
    await Promise.all([reuse(), rotate(), relock(), elsewhere()]);
  }, 400_000);

  it("records in the trajectory the image setup ran in and the kept environment, not only the kept tag", async () => {
    const commands = ["mkdir -p deps && echo lib > deps/lib.txt"];
    const repo = await repository({ "app.txt": "origin\n" });
    const first = await prepare(repo, { commands, repository: "octo/origin" });
    const second = await prepare(repo, { commands, repository: "octo/origin" });
    expect(second.prepared.reused?.preparedAt).toBeInstanceOf(Date);
    const slim = await provider.docker.getImage(SANDBOX_IMAGE).inspect();
    const operator = await loadConfig();
    const replayDir = await mkdtemp(join(tmpdir(), "af-warm-replay-"));
    roots.push(replayDir);
    const replayFile = join(replayDir, "turns.jsonl");
    await writeFile(replayFile, `${turn("Look.", "bash", { command: "cat deps/lib.txt" })}\n`);
    for (const run of [first, second]) {
      const trajectory = await run.sandboxes.using(run.prepared.dir, async (sandbox) => {
        // The sandbox runs the kept image, whose tag goes when the environment is evicted.
        expect(sandbox.image.startsWith(`${STORE}:`)).toBe(true);
        const runner = await createAgentRunner(
          { operator, modelOverride: `replay:${replayFile}` },
          { maxSteps: 2 },
          "warm-origin",
        );
        return runner({
          sandbox,
          issue: { number: 1, title: "Look", body: "" },
          repoName: "octo/origin",
          gate: async () => ({ passed: true, output: "" }),
          onStep: () => {},
          signal: new AbortController().signal,
        });
      });
      await run.sandboxes.disposeAll();
      expect(trajectory.trajectory[0]?.observation).toContain("lib");
      const { info } = trajectory;
      expect(info.sandbox_image).toBe(SANDBOX_IMAGE);
      expect(info.sandbox_image_id).toBe(slim.Id);
      expect(info.kept_environment?.image.startsWith(`${STORE}:`)).toBe(true);
      expect(info.kept_environment?.key).toMatch(/^[0-9a-f]{64}$/);
      // The environment the second run reused is the first run's: prepared once, at the same time.
      expect(info.kept_environment?.prepared_at).toBe(second.prepared.reused?.preparedAt.toISOString());
    }
  }, 400_000);

  it("lays nothing on the host when every kept file lies under a skipped directory: the checkout is the prepared tree", async () => {
    const commands = ["mkdir -p node_modules/only && echo only > node_modules/only/index.js"];
    const first = await prepare(await repository({ "app.txt": "only-1\n" }), { commands });
    expect(first.prepared.reused).toBeUndefined();
    const repo = await repository({ "app.txt": "only-2\n" });
    const second = await prepare(repo, { commands });
    expect(second.prepared.reused).toBeDefined();
    // No copy of the checkout, no tree to compute: the kept image lays node_modules in each sandbox.
    expect(second.prepared.dir).toBe(repo.dir);
    expect(second.prepared.tree).toBe(second.prepared.base.tree);
    expect(await inSandbox(second, "cat node_modules/only/index.js app.txt")).toBe("only\nonly-2");
  }, 300_000);

  it("gives what root setup installed to an agent that is not root, cannot write it and gains nothing from setuid", async () => {
    const commands = [
      // Outside the workspace: only root can write there, and only a kept environment keeps it.
      "mkdir -p /opt/tool && printf '#!/bin/sh\\necho tool-ran\\n' > /opt/tool/run && chmod 755 /opt/tool/run",
      // Hostile: a setuid-root shell, and setup's own capabilities written down for the test.
      "cp /bin/bash /opt/tool/rootsh && chmod 4755 /opt/tool/rootsh",
      "mkdir -p deps && grep -E '^Cap(Eff|Bnd)' /proc/self/status > deps/caps && id -u > deps/uid",
    ];
    const { prepared, sandboxes } = await prepare(await repository({}), { commands, user: "root" });
    expect(await readFile(join(prepared.dir, "deps/uid"), "utf8")).toBe("0\n");
    const caps = await readFile(join(prepared.dir, "deps/caps"), "utf8");
    const effective = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(caps)?.[1]}`);
    expect(effective & (1n << 12n)).toBe(0n); // no NET_ADMIN: root setup cannot undo the egress rules
    expect(effective & 1n).toBe(1n); // CHOWN: what package managers need

    const agent = await sandboxes.start(prepared.dir);
    try {
      const run = async (command: string) => (await agent.exec(command, { timeoutMs: 30_000 })).output.trim();
      expect(await run("/opt/tool/run")).toBe("tool-ran");
      expect(await run("id -u")).toBe("1000");
      expect(await run("/opt/tool/rootsh -p -c 'id -u; grep CapEff /proc/self/status'")).toBe(
        "1000\nCapEff:\t0000000000000000",
      );
      expect(await run("echo x > /opt/tool/run 2>&1 || echo refused")).toContain("refused");
      expect(await run("cat deps/caps >/dev/null && echo readable")).toBe("readable");
    } finally {
      await sandboxes.disposeAll();
    }
  }, 300_000);

  it("keeps nothing, and stops the run, when setup wrote a secret outside the workspace", async () => {
    // This repository's environments: the other tests keep theirs in the same store meanwhile.
    const leaky = async () => (await storeImages()).filter((image) => image.repository === "octo/leaky");
    expect(await leaky()).toEqual([]);
    const token = "npm_s3cr3t-token-value-42";
    const error = await prepare(await repository({}), {
      commands: ['echo "//registry.example/:_authToken=$NPM_TOKEN" > /etc/npmrc', STAMP],
      user: "root",
      repository: "octo/leaky",
      secrets: { NPM_TOKEN: token },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentFixError);
    expect(error).toMatchObject({ code: "secret_in_environment", fault: "repository" });
    expect((error as Error).message).toContain("/etc/npmrc (NPM_TOKEN)");
    expect((error as Error).message).not.toContain(token);
    expect(await leaky()).toEqual([]);
  }, 300_000);

  it("removes the least recently used environments above the operator's size", async () => {
    // Each environment holds about 1 MB outside the workspace; the store holds 2.5 MB.
    const small = new DockerSandboxProvider({ keptEnvironments: { name: `${STORE}-lru`, maxSize: "2500k" } });
    const commands = ["head -c 1000000 /dev/urandom > /var/tmp/fill", STAMP];
    const keep = async (name: string) =>
      (await prepare(await repository({}), { commands, repository: `octo/${name}`, provider: small }))
        .prepared;
    expect((await keep("a")).reused).toBeUndefined();
    expect((await keep("b")).reused).toBeUndefined();
    expect((await keep("a")).reused).toBeDefined(); // a is used again: b is now the least recently used
    expect((await keep("c")).reused).toBeUndefined();
    const left = (await storeImages(`${STORE}-lru`)).map((image) => image.repository).sort();
    expect(left).toEqual(["octo/a", "octo/c"]);
  }, 300_000);
});
