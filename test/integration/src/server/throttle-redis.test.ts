/**
 * With client-side throttling on (production), the GitHub request limiters of @octokit/plugin-throttling
 * live in the deployment's Redis through Probot's `redisConfig`, so every webhook and worker process
 * spaces its writes together. Before, REDIS_URL never reached Probot and each process throttled alone.
 * Its own file: the plugin builds its limiters once per process.
 */
import { afterAll, describe, expect, it } from "vitest";
import { connectRedis } from "../../../../src/shared/queue/index.js";
import { GitHubServer } from "../../../support/github-server.js";
import { redisAvailable, TEST_REDIS_URL } from "../../../support/redis.js";
import { startWebhookApp } from "../../../support/webhook-app.js";
import { labelEvent } from "../../../support/webhooks.js";

const up = await redisAvailable();

describe.skipIf(!up)("GitHub throttling shared through Redis", () => {
  // An app id of this file's own: the limiters in Redis are named after it.
  const github = new GitHubServer({ appId: 900_000 + Math.floor(Math.random() * 99_999) });
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
    const redis = await connectRedis(TEST_REDIS_URL, "producer");
    cleanups.push(async () => {
      const keys = await redis.keys(`b_*agent-fix-${github.appId}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });
    const app = await startWebhookApp({ github, secret: "s", throttle: true });
    cleanups.push(() => app.close());
    const issue = github.addIssue("octo", "shared", { title: "Bug", body: "It breaks" }).number;
    const delivery = labelEvent(github, { owner: "octo", repo: "shared", issue }, "labeled", "agent-fix", {
      login: "alice",
    });
    expect(await app.post(delivery)).toBe(200);
    expect(github.state.commentsOn("octo", "shared", issue)).toHaveLength(1);
    // Bottleneck's keys for the plugin's write limiter ("octokit-write"), keyed by this app.
    expect(await redis.keys(`b_octokit-write-agent-fix-${github.appId}*`)).not.toEqual([]);
  });
});
