import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../../src/shared/errors.js";
import { parseWorkerEnv } from "../../../../worker/config/worker-env.js";

const app = { APP_ID: "1", PRIVATE_KEY: "k" };

describe("worker environment: AGENT_FIX_TRAJECTORY_LINK_DAYS", () => {
  it("is 7 days by default and takes a number of days", () => {
    expect(parseWorkerEnv(app).AGENT_FIX_TRAJECTORY_LINK_DAYS).toBe(7);
    expect(
      parseWorkerEnv({ ...app, AGENT_FIX_TRAJECTORY_LINK_DAYS: "0.5" }).AGENT_FIX_TRAJECTORY_LINK_DAYS,
    ).toBe(0.5);
  });

  it.each(["0", "-1", "forever", "1000"])("refuses %j, naming the variable and an example", (value) => {
    expect(() => parseWorkerEnv({ ...app, AGENT_FIX_TRAJECTORY_LINK_DAYS: value })).toThrow(ConfigError);
    try {
      parseWorkerEnv({ ...app, AGENT_FIX_TRAJECTORY_LINK_DAYS: value });
    } catch (error) {
      expect((error as Error).message).toMatch(/AGENT_FIX_TRAJECTORY_LINK_DAYS/);
      expect((error as ConfigError & { hint?: string }).hint).toBe(
        "For example: AGENT_FIX_TRAJECTORY_LINK_DAYS=7",
      );
    }
  });
});
