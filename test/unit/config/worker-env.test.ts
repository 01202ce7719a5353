import { describe, expect, it } from "vitest";
import { parseWorkerEnv } from "../../../src/config/worker-env.js";
import { ConfigError } from "../../../src/errors.js";
import { createProcessorFromEnv } from "../../../worker/processor.js";

const app = { APP_ID: "1", PRIVATE_KEY: "k" };

describe("worker environment: AGENT_FIX_WORKSPACE_TMPFS", () => {
  it("is unset by default (the workspace stays a disk volume) and takes a size such as 2g", () => {
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
