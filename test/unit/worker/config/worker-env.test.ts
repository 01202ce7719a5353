import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { ConfigError } from "../../../../src/shared/errors.js";
import { loadConfig, mergeConfig } from "../../../../worker/agent/config-file.js";
import { caBundleFile, cidrList, parseWorkerEnv } from "../../../../worker/config/worker-env.js";
import { createProcessorFromEnv } from "../../../../worker/main.js";

const app = { APP_ID: "1", PRIVATE_KEY: "k" };

function refusal(env: Record<string, string>): ConfigError {
  try {
    parseWorkerEnv({ ...app, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("worker environment: variables no longer read", () => {
  it.each([
    ["AGENT_FIX_LOCK_MS", "3000", "worker.lockMs", "worker:\n  lockMs: 3000"],
    ["AGENT_FIX_STALLED_INTERVAL_MS", "750", "worker.stalledIntervalMs", "  stalledIntervalMs: 750"],
    ["AGENT_FIX_REAPER_INTERVAL_MS", "60000", "worker.reaperIntervalMs", "  reaperIntervalMs: 60000"],
    [
      "AGENT_FIX_KEPT_ENVIRONMENTS_SIZE",
      "2g",
      "worker.keptEnvironments.size",
      "keptEnvironments:\n    size: 2g",
    ],
    ["AGENT_FIX_KEPT_ENVIRONMENTS_SIZE", "0", "worker.keptEnvironments.size", "    size: 0"],
    ["AGENT_FIX_STANDBY_SANDBOXES", "4", "worker.standby.sandboxes", "standby:\n    sandboxes: 4"],
    ["AGENT_FIX_STANDBY_IDLE_MINUTES", "10", "worker.standby.idleMinutes", "    idleMinutes: 10"],
  ])("refuses %s=%s, naming the operator YAML key with the value in place", (name, value, key, yaml) => {
    const error = refusal({ [name]: value });
    expect(error.code).toBe("env_invalid");
    expect(error.message).toContain(name);
    expect(error.message).toContain(key);
    expect(error.hint).toContain(`Remove ${name}`);
    expect(error.hint).toContain(yaml);
  });

  it("hints YAML the operator's config loader takes, with the value the variable had", async () => {
    const dir = await mkdtemp(join(tmpdir(), "af-moved-"));
    const env = {
      AGENT_FIX_LOCK_MS: "3000",
      AGENT_FIX_KEPT_ENVIRONMENTS_SIZE: "0",
      AGENT_FIX_STANDBY_IDLE_MINUTES: "10",
    };
    let merged: unknown = {};
    for (const [name, value] of Object.entries(env)) {
      const yaml =
        refusal({ [name]: value })
          .hint?.split("\n")
          .slice(1)
          .join("\n") ?? "";
      merged = mergeConfig(merged, parseYaml(yaml));
    }
    const file = join(dir, "operator.yml");
    await writeFile(file, toYaml(merged));
    const { worker } = await loadConfig({ files: [file] });
    expect(worker).toMatchObject({
      lockMs: 3000,
      keptEnvironments: { size: 0 },
      standby: { idleMinutes: 10 },
    });
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses the former AGENT_FIX_WORKSPACE_TMPFS, naming AGENT_FIX_WORKSPACE_SIZE", () => {
    const error = refusal({ AGENT_FIX_WORKSPACE_TMPFS: "2g" });
    expect(error.message).toMatch(
      /AGENT_FIX_WORKSPACE_TMPFS is no longer read: it is AGENT_FIX_WORKSPACE_SIZE/,
    );
    expect(error.hint).toBe("Rename it: AGENT_FIX_WORKSPACE_SIZE=2g");
    // Empty is unset, as for every variable.
    expect(parseWorkerEnv({ ...app, AGENT_FIX_WORKSPACE_TMPFS: "" }).AGENT_FIX_SANDBOX).toBe("docker");
  });

  it("stops the worker at start, before it connects to anything", async () => {
    // An unreachable Redis and GitHub: the environment is checked before either is used.
    const env = {
      ...app,
      GHE_HOST: "127.0.0.1:1",
      GHE_PROTOCOL: "http",
      AGENT_FIX_REDIS_URL: "redis://127.0.0.1:1",
      AGENT_FIX_STANDBY_SANDBOXES: "0",
    };
    await expect(createProcessorFromEnv(env)).rejects.toThrow(/worker\.standby\.sandboxes/);
  });
});

describe("worker environment: the sandbox's workspace size and setup network", () => {
  it("takes a workspace size and CIDR lists, and refuses what is not one, naming the variable", () => {
    const env = parseWorkerEnv({
      ...app,
      AGENT_FIX_WORKSPACE_SIZE: "3g",
      AGENT_FIX_SETUP_NETWORK_ALLOW: "10.20.0.5/32, 10.30.0.0/16",
      AGENT_FIX_SETUP_NETWORK_DENY: "203.0.113.7",
    });
    expect(env.AGENT_FIX_WORKSPACE_SIZE).toBe("3g");
    expect(env.AGENT_FIX_SETUP_NETWORK).toBe("agent-fix-setup");
    expect(cidrList(env.AGENT_FIX_SETUP_NETWORK_ALLOW)).toEqual(["10.20.0.5/32", "10.30.0.0/16"]);
    expect(cidrList(env.AGENT_FIX_SETUP_NETWORK_DENY)).toEqual(["203.0.113.7"]);
    expect(cidrList(undefined)).toEqual([]);
    for (const [name, value] of [
      ["AGENT_FIX_WORKSPACE_SIZE", "4 GB"],
      ["AGENT_FIX_SETUP_NETWORK_ALLOW", "registry.internal"],
      ["AGENT_FIX_SETUP_NETWORK_DENY", "10.0.0.0/8;"],
    ] as const) {
      let error: unknown;
      try {
        parseWorkerEnv({ ...app, [name]: value });
      } catch (caught) {
        error = caught;
      }
      expect(error, name).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain(name);
      expect((error as ConfigError & { hint?: string }).hint).toContain(`${name}=`);
    }
  });
});

describe("worker environment: AGENT_FIX_CA_BUNDLE", () => {
  it("defaults to the host's bundle when it has one; a file given is used; none turns it off", () => {
    const hostHas = (file: string) => file === "/etc/ssl/certs/ca-certificates.crt";
    expect(caBundleFile(undefined, hostHas)).toBe("/etc/ssl/certs/ca-certificates.crt");
    expect(caBundleFile(undefined, () => false)).toBeUndefined();
    expect(caBundleFile("/etc/proxy/ca.pem", hostHas)).toBe("/etc/proxy/ca.pem");
    expect(caBundleFile("none", hostHas)).toBeUndefined();
  });
});
