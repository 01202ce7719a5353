/**
 * A setup secret named by `owner/repo` alone would go to whoever holds that name when a run comes. The
 * worker refuses to start with such an entry and prints the entry to write, with the repository's id
 * and installation as GitHub (the stand-in) answers the app for that name; a name the app cannot see
 * gets how to find them. Through the worker's composition root, over real HTTP.
 */
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProcessorFromEnv } from "../../../worker/main.js";
import { type GitHubServer, startGitHubServer } from "../../support/github-server.js";
import { redisUrl, requireRedis } from "../../support/services.js";

const redisUp = await requireRedis();

describe.runIf(redisUp)("worker start: setup secrets bound by name only", () => {
  let github: GitHubServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    github = await startGitHubServer();
    env = {
      APP_ID: String(github.appId),
      PRIVATE_KEY: github.keys.privateKeyPem,
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      AGENT_FIX_SANDBOX: "local",
      LOG_LEVEL: "error",
      AGENT_FIX_REDIS_URL: redisUrl(),
      AGENT_FIX_QUEUE_PREFIX: `af-secrets-start-${process.pid}`,
      AGENT_FIX_TRAJECTORY_DIR: join(tmpdir(), `af-secrets-start-${process.pid}`),
    };
  });
  afterAll(async () => {
    await github?.stop();
    await rm(env.AGENT_FIX_TRAJECTORY_DIR ?? "", { recursive: true, force: true });
  });

  it("stops the start with the ids to add, looked up through the app", async () => {
    const app = await github.addRepo({
      owner: "octo",
      name: "app",
      files: { "x.txt": "x\n" },
      installationId: 3,
    });
    const secrets = JSON.stringify({ "octo/app": { NPM_TOKEN: "t" }, "octo/gone": { NPM_TOKEN: "u" } });
    const start = createProcessorFromEnv({ ...env, AGENT_FIX_SETUP_SECRETS: secrets });
    await expect(start).rejects.toMatchObject({
      code: "worker_env_invalid",
      message: expect.stringContaining("names octo/app, octo/gone by name only"),
      hint: expect.stringContaining(
        `"octo/app": {"repositoryId": ${app.id}, "installationId": 3, "secrets": {...}}`,
      ),
    });
    await expect(start).rejects.toMatchObject({
      hint: expect.stringMatching(
        /"octo\/gone": not found through the app .*gh api repos\/octo\/gone --jq \.id/,
      ),
    });
  });

  it("starts with bound entries (and reads no repository at start for them)", async () => {
    const before = github.state.requests.length;
    const secrets = JSON.stringify({
      "octo/app": { repositoryId: 77, installationId: 3, secrets: { NPM_TOKEN: "t" } },
    });
    const built = await createProcessorFromEnv({ ...env, AGENT_FIX_SETUP_SECRETS: secrets });
    await built.close();
    expect(github.state.requests.slice(before).filter((r) => r.path.startsWith("/repos/"))).toEqual([]);
  });
});
