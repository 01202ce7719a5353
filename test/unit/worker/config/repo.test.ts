import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../../src/shared/errors.js";
import { parseRepoConfig, repoConfigJsonSchema } from "../../../../worker/config/repo.js";

const SCHEMA_FILE = new URL("../../../../config/agent-fix.schema.json", import.meta.url);

function configError(text: string): ConfigError {
  try {
    parseRepoConfig(text);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe(".github/agent-fix.yml", () => {
  it("fills the defaults around a minimal file", () => {
    const config = parseRepoConfig("test:\n  command: pytest -q\n");
    expect(config.test).toEqual({ command: "pytest -q", timeoutSeconds: 300 });
    expect(config.setup).toEqual({ commands: [], timeoutSeconds: 600, network: true, user: "agent" });
    expect(config.forbiddenPaths).toEqual([".github/workflows/**", ".github/agent-fix.yml"]);
    expect(config.openPullRequestWhenBaselineFails).toBe(false);
    expect(config.tools).toBe("default");
  });

  it("reads every field", () => {
    const config = parseRepoConfig(
      [
        "setup:\n  commands: [npm ci]\n  timeoutSeconds: 120\n  network: false",
        "test:\n  command: npm test\n  timeoutSeconds: 60\n  paths: ['test/**']",
        "model: openai:gpt-4.1",
        "limits:\n  maxSteps: 30\n  maxCostUsd: 1.5\n  maxTimeMinutes: 20",
        "tools: editor",
        "forbiddenPaths: ['.github/**', 'secrets/**']",
        "openPullRequestWhenBaselineFails: true",
      ].join("\n"),
    );
    expect(config).toMatchObject({
      setup: { commands: ["npm ci"], timeoutSeconds: 120, network: false },
      test: { command: "npm test", timeoutSeconds: 60, paths: ["test/**"] },
      model: "openai:gpt-4.1",
      limits: { maxSteps: 30, maxCostUsd: 1.5, maxTimeMinutes: 20 },
      tools: "editor",
      forbiddenPaths: [".github/**", "secrets/**"],
      openPullRequestWhenBaselineFails: true,
    });
  });

  it("names the field, says what is wrong and shows the right form", () => {
    const wrongType = configError("test:\n  command: 42\n");
    expect(wrongType.code).toBe("repo_config_invalid");
    expect(wrongType.fault).toBe("config");
    expect(wrongType.retryable).toBe(false);
    expect(wrongType.message).toContain("`test.command`");
    expect(wrongType.message).toMatch(/expected string/i);
    expect(wrongType.hint).toContain("command: npm test");

    // No test command is not an error here: the worker finds one from the repository's files.
    expect(parseRepoConfig("setup:\n  commands: [make]\n").test).toEqual({ timeoutSeconds: 300 });

    const typo = configError("test:\n  command: make test\nlimits:\n  maxStep: 5\n");
    expect(typo.message).toMatch(/unknown field `maxStep` in `limits`/);
    expect(typo.hint).toContain("maxSteps: 50");

    const tooBig = configError("test:\n  command: x\n  timeoutSeconds: 99999\n");
    expect(tooBig.message).toContain("`test.timeoutSeconds`");
    expect(tooBig.hint).toContain("timeoutSeconds: 300");
  });

  it("says so when the file is not YAML", () => {
    const error = configError("test: [unclosed\n");
    expect(error.message).toMatch(/not valid YAML/);
  });

  it("publishes a JSON Schema that matches the zod schema (UPDATE_SCHEMA=1 rewrites it)", async () => {
    const generated = repoConfigJsonSchema();
    if (process.env.UPDATE_SCHEMA === "1")
      await writeFile(SCHEMA_FILE, `${JSON.stringify(generated, null, 2)}\n`);
    const published = JSON.parse(await readFile(SCHEMA_FILE, "utf8").catch(() => "null")) as {
      properties: Record<string, unknown>;
      required: string[];
    } | null;
    expect(
      published,
      "config/agent-fix.schema.json is stale: run UPDATE_SCHEMA=1 npx vitest run test/unit/worker/config/repo.test.ts, then npx biome format --write config/agent-fix.schema.json",
    ).toEqual(generated);
    expect(Object.keys(published?.properties ?? {})).toContain("forbiddenPaths");
    // Nothing is required: a missing test command is found from the repository's files.
    expect(published?.required).toBeUndefined();
  });
});
