/**
 * With client-side throttling on (production), the GitHub request limiters of @octokit/plugin-throttling
 * live in the deployment's Redis through Probot's `redisConfig`, so every webhook and worker process
 * spaces its writes together. Before, REDIS_URL never reached Probot and each process throttled alone.
 * Its own file: the plugin builds its limiters once per process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "../../../src/config/env.js";
import { connectRedis } from "../../../src/queue/index.js";
import { startAppServer } from "../../../src/server.js";
import { GitHubServer } from "../../support/github-server.js";
import { deliver, labelEvent } from "../../support/webhooks.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../queue/redis.js";

const up = await redisAvailable();

describe.skipIf(!up)("GitHub throttling shared through Redis", () => {
  // An app id of this file's own: the limiters in Redis are named after it.
  const github = new GitHubServer({ appId: 900_000 + Math.floor(Math.random() * 99_999) });
  const prefix = testPrefix();
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it("keeps the write limiter of the app in the queue's Redis", async () => {
    await github.start();
    cleanups.push(() => github.stop());
    await github.addRepo({
      owner: "octo",
      name: "shared",
      files: { "README.md": "x\n" },
      permissions: { alice: "write" },
    });
    const dir = await mkdtemp(join(tmpdir(), "af-throttle-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const redis = await connectRedis(TEST_REDIS_URL, "producer");
    cleanups.push(async () => {
      await dropPrefix(redis, prefix);
      const keys = await redis.keys(`b_*agent-fix-${github.appId}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });
    const app = await startAppServer(
      parseEnv({
        AGENT_FIX_TRAJECTORY_DIR: dir,
        APP_ID: String(github.appId),
        PRIVATE_KEY: github.keys.privateKeyPem,
        WEBHOOK_SECRET: "s",
        GHE_HOST: github.host,
        GHE_PROTOCOL: "http",
        HOST: "127.0.0.1",
        PORT: "0",
        AGENT_FIX_REDIS_URL: TEST_REDIS_URL,
        AGENT_FIX_QUEUE_PREFIX: prefix,
        AGENT_FIX_GITHUB_THROTTLE: "true",
        LOG_LEVEL: "fatal",
      }),
    );
    cleanups.push(() => app.close());
    const issue = github.addIssue("octo", "shared", { title: "Bug", body: "It breaks" }).number;
    const delivery = labelEvent(github, { owner: "octo", repo: "shared", issue }, "labeled", "agent-fix", {
      login: "alice",
    });
    expect(await deliver(`${app.url}/api/github/webhooks`, "s", delivery)).toBe(200);
    expect(github.state.commentsOn("octo", "shared", issue)).toHaveLength(1);
    // Bottleneck's keys for the plugin's write limiter ("octokit-write"), keyed by this app.
    expect(await redis.keys(`b_octokit-write-agent-fix-${github.appId}*`)).not.toEqual([]);
  });
});
