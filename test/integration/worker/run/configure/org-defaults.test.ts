import { Probot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../../worker/agent/config-file.js";
import { type LoadedRepoConfig, loadRepoConfig } from "../../../../../worker/run/configure/repo-config.js";
import type { OperatorRules } from "../../../../../worker/run/configure/repo-rules.js";
import { probotInstallationAuth } from "../../../../../worker/run/open/installation-auth.js";
import { type GitHubServer, StandInOctokit, startGitHubServer } from "../../../../support/github-server.js";

// The worker's own credentials (scoped installation tokens) against the stand-in's contents API.
describe("organisation defaults: the owner's .github repository, with each repository's file merged over it", () => {
  let github: GitHubServer;
  let rules: OperatorRules;
  const ids = new Map<string, number>();

  const addRepo = async (owner: string, name: string, files: Record<string, string>, installationId = 1) => {
    const repo = await github.addRepo({ owner, name, files, installationId });
    ids.set(`${owner}/${name}`, repo.id);
  };
  /** Loads the config of `owner/repo` as a run does: a contents reader for it and one for `.github`. */
  const load = async (owner: string, repo: string, installationId = 1): Promise<LoadedRepoConfig> => {
    const probot = new Probot({
      appId: github.appId,
      privateKey: github.keys.privateKeyPem,
      baseUrl: github.apiUrl,
      Octokit: StandInOctokit,
    });
    const credentials = probotInstallationAuth(probot).forRun(
      installationId,
      ids.get(`${owner}/${repo}`) ?? 0,
    );
    try {
      const sources = {
        repo: await credentials.contentsReader(),
        org: await credentials.orgContentsReader(),
      };
      return await loadRepoConfig(sources, { owner, repo, defaultBranch: "main" }, rules);
    } finally {
      await credentials.revoke();
    }
  };
  const refusal = (owner: string, repo: string, installationId = 1) =>
    load(owner, repo, installationId).then(
      () => {
        throw new Error("the config was accepted");
      },
      (error: Error & { code?: string; hint?: string }) => error,
    );

  beforeAll(async () => {
    const operator = await loadConfig();
    rules = { defaultMaxSteps: 50, policy: operator.repository, model: operator.model };
    github = await startGitHubServer();
    await addRepo("acme", ".github", {
      ".github/agent-fix.yml":
        'limits:\n  maxSteps: 12\n  maxCostUsd: 3\nsetup:\n  timeoutSeconds: 900\nforbiddenPaths:\n  - "secrets/**"\n',
    });
    await addRepo("acme", "api", {
      ".github/agent-fix.yml": "_extends: .github\ntest:\n  command: make check\nlimits:\n  maxCostUsd: 1\n",
      Makefile: "check:\n\ttrue\n",
    });
    await addRepo("acme", "web", {
      "package.json": '{ "name": "web", "scripts": { "test": "node --test" } }\n',
      "package-lock.json": '{ "lockfileVersion": 3 }\n',
    });
  });
  afterAll(async () => {
    await github?.stop();
  });

  it("applies to a repository with its own file (merged over) and to one without (commands detected)", async () => {
    const api = await load("acme", "api");
    expect(api).toMatchObject({
      testCommand: "make check",
      setup: [],
      setupTimeoutMs: 900_000,
      maxSteps: 12,
      agent: { maxSteps: 12, maxCostUsd: 1 },
    });
    expect(api.forbiddenPaths).toContain("secrets/**");
    expect(api.configNote).toBe(
      "Settings: `acme/.github: .github/agent-fix.yml` (the organisation's defaults), with this repository's .github/agent-fix.yml merged over it.",
    );

    const web = await load("acme", "web");
    expect(web).toMatchObject({
      testCommand: "npm test",
      setup: ["npm ci"],
      setupTimeoutMs: 900_000,
      maxSteps: 12,
      agent: { maxCostUsd: 3 },
    });
    expect(web.configNote).toContain(
      "the organisation's defaults; this repository has no .github/agent-fix.yml",
    );
    expect(web.configNote).toContain("- node in `/` (package.json (`test` script), package-lock.json)");
    expect(web.configNote).toContain(
      "```yaml\nsetup:\n  commands:\n    - npm ci\ntest:\n  command: npm test\n```",
    );
  });

  it("the operator's ceilings bound the merged result; a bad defaults file is named as such", async () => {
    await addRepo("bold", ".github", { ".github/agent-fix.yml": "limits:\n  maxSteps: 400\n" }, 2);
    await addRepo("bold", "app", { ".github/agent-fix.yml": "test:\n  command: make test\n" }, 2);
    const above = await refusal("bold", "app", 2);
    expect(above.code).toBe("repo_config_above_ceiling");
    expect(above.message).toContain("`limits.maxSteps`: 400 is above the operator's ceiling of 100 steps");

    await addRepo("typo", ".github", { ".github/agent-fix.yml": "limit:\n  maxSteps: 4\n" }, 3);
    await addRepo("typo", "app", { ".github/agent-fix.yml": "test:\n  command: make test\n" }, 3);
    const invalid = await refusal("typo", "app", 3);
    expect(invalid.code).toBe("repo_config_invalid");
    expect(invalid.message).toBe(
      "typo/.github: .github/agent-fix.yml is invalid: unknown field `limit` (check the spelling; fields are camelCase)",
    );
  });

  it("without a .github repository (or without the file in it) the repository's own file is the config", async () => {
    await addRepo("solo", "app", { ".github/agent-fix.yml": "test:\n  command: make test\n" }, 4);
    expect(await load("solo", "app", 4)).toMatchObject({ testCommand: "make test", maxSteps: 50 });
    await addRepo("empty", ".github", { "README.md": "profile\n" }, 5);
    await addRepo("empty", "app", { ".github/agent-fix.yml": "test:\n  command: make test\n" }, 5);
    const config = await load("empty", "app", 5);
    expect(config).toMatchObject({ testCommand: "make test", maxSteps: 50 });
    expect(config.configNote).toBeUndefined();
  });

  it("`_extends` naming another repository is refused", async () => {
    await addRepo("acme", "sneaky", {
      ".github/agent-fix.yml": "_extends: other/settings\ntest:\n  command: x\n",
    });
    const error = await refusal("acme", "sneaky");
    expect(error.code).toBe("repo_config_invalid");
    expect(error.message).toContain('`_extends`: "other/settings" is not supported');
  });
});
