import { describe, expect, it } from "vitest";
import {
  githubApiUrl,
  hasAppCredentials,
  parseEnv,
  requireWebhookSecret,
} from "../../../../../src/shared/config/env.js";
import { ConfigError } from "../../../../../src/shared/errors.js";

describe("process environment", () => {
  it("has working defaults and no credentials (manifest flow) when empty", () => {
    const env = parseEnv({});
    expect(env.AGENT_FIX_REDIS_URL).toBe("redis://127.0.0.1:6379");
    expect(env.AGENT_FIX_LABEL).toBe("agent-fix");
    expect(env.AGENT_FIX_CONCURRENCY).toBe(1);
    expect(hasAppCredentials(env)).toBe(false);
    expect(githubApiUrl(env)).toBe("https://api.github.com");
  });

  it("reads credentials, unescapes the key's newlines and points at GHE_HOST", () => {
    const env = parseEnv({
      APP_ID: "42",
      PRIVATE_KEY: "-----BEGIN-----\\nabc\\n-----END-----",
      GHE_HOST: "127.0.0.1:8080",
      GHE_PROTOCOL: "http",
      AGENT_FIX_CONCURRENCY: "4",
      AGENT_FIX_GITHUB_THROTTLE: "false",
      REDIS_URL: "redis://probot-only:6379",
    });
    expect(env.APP_ID).toBe(42);
    expect(env.PRIVATE_KEY).toBe("-----BEGIN-----\nabc\n-----END-----");
    expect(hasAppCredentials(env)).toBe(true);
    expect(githubApiUrl(env)).toBe("http://127.0.0.1:8080/api/v3");
    expect(env.AGENT_FIX_CONCURRENCY).toBe(4);
    expect(env.AGENT_FIX_GITHUB_THROTTLE).toBe(false);
    // Probot's REDIS_URL is not the queue's.
    expect(env.AGENT_FIX_REDIS_URL).toBe("redis://127.0.0.1:6379");
  });

  it("names the wrong variable and shows an example", () => {
    let error: unknown;
    try {
      parseEnv({ AGENT_FIX_CONCURRENCY: "lots" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("AGENT_FIX_CONCURRENCY");
    expect((error as ConfigError).hint).toBe("For example: AGENT_FIX_CONCURRENCY=2");
    expect(() => parseEnv({ AGENT_FIX_REDIS_URL: "localhost:6379" })).toThrow(/AGENT_FIX_REDIS_URL/);
  });

  it("requires a webhook secret that is not Probot's public development one, naming WEBHOOK_SECRET", () => {
    expect(() => requireWebhookSecret(parseEnv({}))).toThrow(/WEBHOOK_SECRET is not set/);
    expect(() => requireWebhookSecret(parseEnv({ WEBHOOK_SECRET: "development" }))).toThrow(
      /WEBHOOK_SECRET is Probot's public development secret/,
    );
    expect(requireWebhookSecret(parseEnv({ WEBHOOK_SECRET: "0f3a9c" }))).toBe("0f3a9c");
  });

  it("caps webhook bodies at GitHub's 25 MB unless set lower, and lists the bots whose label counts", () => {
    expect(parseEnv({}).AGENT_FIX_WEBHOOK_MAX_BYTES).toBe(25 * 1024 * 1024);
    expect(parseEnv({ AGENT_FIX_WEBHOOK_MAX_BYTES: "1048576" }).AGENT_FIX_WEBHOOK_MAX_BYTES).toBe(1048576);
    expect(() => parseEnv({ AGENT_FIX_WEBHOOK_MAX_BYTES: String(300 * 1024 * 1024) })).toThrow(
      /AGENT_FIX_WEBHOOK_MAX_BYTES/,
    );
    expect(parseEnv({}).AGENT_FIX_LABEL_BOTS).toEqual([]);
    expect(
      parseEnv({ AGENT_FIX_LABEL_BOTS: "renovate[bot], release-helper[bot]" }).AGENT_FIX_LABEL_BOTS,
    ).toEqual(["renovate[bot]", "release-helper[bot]"]);
  });
});
