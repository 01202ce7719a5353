/**
 * The metrics wrapper around the sandbox provider (worker/metrics.ts meteredSandboxes) is the provider
 * with `create` timed: every other member is the provider's own. A wrapper that copied members once
 * dropped `environments`, which turned warm start off without a word.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DockerEnginePool } from "../../../sandbox/docker/engine-pool.js";
import { DockerSandboxProvider } from "../../../sandbox/docker/provider.js";
import { LocalSandboxProvider } from "../../../sandbox/local.js";
import type { SandboxProvider } from "../../../src/shared/contracts.js";
import { metrics } from "../../../src/shared/metrics/registry.js";
import { meteredSandboxes } from "../../../worker/metrics.js";
import { requireSandboxImage } from "../../support/services.js";

const docker = await requireSandboxImage();

/** Every member of the contract: a member added to SandboxProvider must be added here (typecheck). */
const MEMBERS: Record<keyof Required<SandboxProvider>, true> = {
  driver: true,
  create: true,
  environments: true,
  repoImage: true,
  toolchains: true,
  forRun: true,
};

/** Sandboxes started with `driver`, as the histogram counts them. */
async function startsCounted(driver: SandboxProvider["driver"]): Promise<number> {
  const { values } = await metrics.sandboxStart.get();
  return values.find((v) => v.metricName?.endsWith("_count") && v.labels.driver === driver)?.value ?? 0;
}

describe("meteredSandboxes", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("keeps every member of a Docker provider with kept environments, and the provider's own class", () => {
    const provider = new DockerSandboxProvider({ keptEnvironments: { name: "metered-test", maxSize: "1g" } });
    const metered = meteredSandboxes(provider);
    expect(provider.environments).toBeDefined();
    for (const member of Object.keys(MEMBERS) as (keyof SandboxProvider)[]) {
      // Wrapped: a run's own provider is metered too (below).
      if (member === "create" || member === "forRun") continue;
      const own = provider[member];
      // A method is the provider's own, bound to it (its private fields are not the proxy's).
      const forwarded: unknown = metered[member];
      if (typeof own === "function")
        expect(typeof forwarded === "function" && forwarded.name, member).toBe(`bound ${own.name}`);
      else expect(metered[member], member).toBe(own);
    }
    // Members beyond the contract, and the class the pipeline may ask about, are the provider's too.
    expect(metered).toBeInstanceOf(DockerSandboxProvider);
    expect(metered.image).toBe(provider.image);
    expect(metered.workerId).toBe(provider.workerId);
  });

  it("creates through the provider and counts the start under its driver", async () => {
    const source = await mkdtemp(join(tmpdir(), "af-metered-"));
    dirs.push(source);
    await writeFile(join(source, "a.txt"), "from the source\n");
    const metered = meteredSandboxes(new LocalSandboxProvider({ warn: () => {} }));
    const before = await startsCounted("local");
    const sandbox = await metered.create({ sourceDir: source, jobId: "metered-1" });
    try {
      expect((await sandbox.exec("cat a.txt")).output).toBe("from the source\n");
      expect(await startsCounted("local")).toBe(before + 1);
    } finally {
      await sandbox.dispose();
    }
  });

  it.runIf(docker)("meters the sandboxes of a run's own provider (forRun) as the provider's", async () => {
    const source = await mkdtemp(join(tmpdir(), "af-metered-"));
    dirs.push(source);
    await writeFile(join(source, "a.txt"), "from the source\n");
    // Two engines' worth of pool (the same engine twice): forRun holds one engine for the run.
    const pool = new DockerEnginePool([
      { name: "first", provider: new DockerSandboxProvider() },
      { name: "second", provider: new DockerSandboxProvider() },
    ]);
    const metered = meteredSandboxes(pool);
    const local: SandboxProvider = new LocalSandboxProvider({ warn: () => {} });
    expect(meteredSandboxes(local).forRun).toBeUndefined();
    const run = metered.forRun?.("metered-run") as SandboxProvider;
    const before = await startsCounted("docker");
    const sandbox = await run.create({ sourceDir: source, jobId: "metered-run" });
    try {
      expect((await sandbox.exec("cat a.txt")).output).toBe("from the source\n");
      expect(await startsCounted("docker")).toBe(before + 1);
    } finally {
      await sandbox.dispose();
      await pool.close();
    }
  });
});
