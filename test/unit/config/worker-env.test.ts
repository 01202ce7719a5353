import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { caBundleFile, cidrList, parseWorkerEnv } from "../../../worker/config/worker-env.js";
import { createProcessorFromEnv } from "../../../worker/processor.js";

const app = { APP_ID: "1", PRIVATE_KEY: "k" };

describe("worker environment: AGENT_FIX_WORKSPACE_TMPFS", () => {
  it("is unset by default and takes a size such as 2g", () => {
    expect(parseWorkerEnv(app).AGENT_FIX_WORKSPACE_TMPFS).toBeUndefined();
    expect(parseWorkerEnv({ ...app, AGENT_FIX_WORKSPACE_TMPFS: "2g" }).AGENT_FIX_WORKSPACE_TMPFS).toBe("2g");
    expect(parseWorkerEnv({ ...app, AGENT_FIX_WORKSPACE_TMPFS: "512M" }).AGENT_FIX_WORKSPACE_TMPFS).toBe(
      "512M",
    );
  });

  it.each(["2 GB", "-1g", "0", "lots", "2t"])("refuses %j, naming the variable and an example", (value) => {
    let error: unknown;
    try {
      parseWorkerEnv({ ...app, AGENT_FIX_WORKSPACE_TMPFS: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message, hint } = error as ConfigError & { hint?: string };
    expect(message).toMatch(/AGENT_FIX_WORKSPACE_TMPFS/);
    expect(message).toMatch(/"2g"/);
    expect(hint).toBe("For example: AGENT_FIX_WORKSPACE_TMPFS=2g");
  });

  it("stops the worker at start, before it connects to anything", async () => {
    // An unreachable Redis and GitHub: the environment is checked before either is used.
    const env = {
      ...app,
      GHE_HOST: "127.0.0.1:1",
      GHE_PROTOCOL: "http",
      AGENT_FIX_REDIS_URL: "redis://127.0.0.1:1",
      AGENT_FIX_WORKSPACE_TMPFS: "two gigabytes",
    };
    await expect(createProcessorFromEnv(env)).rejects.toThrow(/AGENT_FIX_WORKSPACE_TMPFS/);
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
