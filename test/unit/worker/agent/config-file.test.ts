import { copyFile, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../../src/shared/errors.js";
import { loadConfig, mergeConfig } from "../../../../worker/agent/config-file.js";

async function file(text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "agent-config-")), "override.yaml");
  await writeFile(path, text);
  return path;
}

describe("loading config/default.yaml with a user's file on top", () => {
  it("merges objects key by key: a user adds a price and changes one limit, the rest stays", async () => {
    const path = await file(
      "model:\n  prices:\n    models:\n      llama3: { input: 0.1, output: 0.2 }\nagent:\n  limits:\n    maxSteps: 7\n",
    );
    const config = await loadConfig({ files: [path] });
    expect(config.model.prices.models.llama3).toEqual({ input: 0.1, output: 0.2 });
    expect(config.model.prices.models["gpt-4.1"]).toBeDefined();
    expect(config.agent.limits).toMatchObject({ maxSteps: 7, maxCostUsd: 3 });
    expect(config.sources.at(-1)).toBe(path);
    expect(config.hash).not.toBe((await loadConfig()).hash);
  });

  it("names the file and key of a wrong value, and rejects an unknown section", async () => {
    const wrong = await file("agent:\n  history:\n    processor: last_5\n");
    const error = await loadConfig({ files: [wrong] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(new RegExp(`^${wrong}: agent\\.history\\.processor: `));
    const section = await file("agents:\n  limits: {}\n");
    await expect(loadConfig({ files: [section] })).rejects.toThrow('unknown section "agents"');
  });

  it("reads github.linkHosts (empty by default) and names a value that is not a host", async () => {
    expect((await loadConfig()).github.linkHosts).toEqual([]);
    const hosts = await file("github:\n  linkHosts: [docs.example.com, ci.example.com:8443]\n");
    expect((await loadConfig({ files: [hosts] })).github.linkHosts).toEqual([
      "docs.example.com",
      "ci.example.com:8443",
    ]);
    const url = await file("github:\n  linkHosts: [https://docs.example.com/]\n");
    const error = await loadConfig({ files: [url] }).catch((e: unknown) => e);
    expect((error as Error).message).toContain(`${url}: github.linkHosts.0: a host name in lower case`);
  });

  it("reads the worker's tuning (defaults of config/default.yaml), a kept size of 0, and names a wrong value", async () => {
    expect((await loadConfig()).worker).toEqual({
      lockMs: 60_000,
      stalledIntervalMs: null,
      reaperIntervalMs: 300_000,
      keptEnvironments: { size: "20g" },
      standby: { sandboxes: 3, idleMinutes: 30, sharedImages: true },
      keepUp: { strategy: "merge", whenConflicting: false },
      engineWatch: { everyMs: 5_000, timeoutMs: 5_000, misses: 2 },
    });
    const tuned = await file("worker:\n  keptEnvironments:\n    size: 0\n  standby:\n    sandboxes: 0\n");
    expect((await loadConfig({ files: [tuned] })).worker).toMatchObject({
      lockMs: 60_000,
      keptEnvironments: { size: 0 },
      standby: { sandboxes: 0, idleMinutes: 30 },
    });
    const wrong = await file("worker:\n  keptEnvironments:\n    size: 2 GB\n");
    const error = await loadConfig({ files: [wrong] }).catch((e: unknown) => e);
    expect((error as Error).message).toContain(`${wrong}: worker.keptEnvironments.size: `);
  });

  it("renders agent.demonstrationFile, relative to the file that names it, into the demonstration prompt", async () => {
    const shipped = fileURLToPath(
      new URL("../../../../config/demonstrations/calc-mean.traj", import.meta.url),
    );
    const dir = await mkdtemp(join(tmpdir(), "agent-config-"));
    await copyFile(shipped, join(dir, "demo.traj"));
    await writeFile(join(dir, "override.yaml"), "agent:\n  demonstrationFile: demo.traj\n");
    const config = await loadConfig({ files: [join(dir, "override.yaml")] });
    const text = config.agent.prompts.demonstration!;
    expect(text).toMatch(/^Here is a demonstration/);
    expect(text).toContain("```\nedit 3:3\n    if not values:\n        return 0\n");
    expect(text).toContain("OBSERVATION:\n[File: calc/ops.py (8 lines total)]");
    expect(text).toMatch(/--- END OF DEMONSTRATION ---$/);
    await writeFile(join(dir, "override.yaml"), "agent:\n  demonstrationFile: missing.traj\n");
    await expect(loadConfig({ files: [join(dir, "override.yaml")] })).rejects.toThrow(
      `${join(dir, "override.yaml")}: agent.demonstrationFile: cannot read trajectory ${join(dir, "missing.traj")}`,
    );
  });

  it("replaces arrays and scalars rather than merging them", () => {
    expect(mergeConfig({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { d: 5 } })).toEqual({
      a: [3],
      b: { c: 1, d: 5 },
    });
  });
});
