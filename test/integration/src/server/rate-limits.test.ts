/**
 * GitHub's secondary rate limits in the webhook process: waited out and retried (Probot 14 only logs
 * them); a wait longer than a delivery can take still queues the run, without its status comment
 * (the worker posts it, see test/e2e/rate-limits.test.ts); and with client-side throttling on, the
 * limiters live in the deployment's Redis, shared by all its processes. Real Probot server, real
 * Redis, the GitHub stand-in answering as GitHub documents.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppServer } from "../../../../src/server/app-server.js";
import { connectRedis, fixJobId } from "../../../../src/shared/queue/index.js";
import { GitHubServer } from "../../../support/github-server.js";
import { redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import { deliver, labelEvent } from "../../../support/webhooks.js";

const up = await redisAvailable();
const SECRET = "rate-limit-secret";

describe.skipIf(!up)("GitHub rate limits in the webhook process", () => {
  // An app id of this file's own: the throttling limiters in Redis are named after it.
  const github = new GitHubServer({ appId: 900_000 + Math.floor(Math.random() * 99_999) });
  const prefix = testPrefix();
  const owner = "octo";
  const repo = "limited";
  let app: AppServer;
  let redis: Redis;
  let web: WebhookApp;

  const post = (server: AppServer, delivery: Parameters<typeof deliver>[2]) =>
    deliver(`${server.url}/api/github/webhooks`, SECRET, delivery);
  const label = (issue: number) =>
    labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", { login: "alice" });
  const newIssue = () => github.addIssue(owner, repo, { title: "Bug", body: "It breaks" }).number;
  const jobOf = (issue: number) =>
    app.queue.queue.getJob(fixJobId(github.state.repo(owner, repo)?.id ?? 0, issue));
  const statusComments = (issue: number) =>
    github.state.commentsOn(owner, repo, issue).filter((c) => c.user.login === github.bot.login);
  const attempts = (method: string, path: RegExp) =>
    github.state.requests.filter((r) => r.method === method && path.test(r.path)).map((r) => r.status);

  beforeAll(async () => {
    await github.start();
    await github.addRepo({
      owner,
      name: repo,
      files: { "README.md": "x\n" },
      permissions: { alice: "write" },
    });
    redis = await connectRedis(TEST_REDIS_URL, "producer");
    web = await startWebhookApp({ github, secret: SECRET, prefix });
    app = web.server;
  });

  afterAll(async () => {
    await web?.close();
    const limiterKeys = await redis.keys(`b_*agent-fix-${github.appId}*`);
    if (limiterKeys.length > 0) await redis.del(...limiterKeys);
    redis.disconnect();
    await github.stop();
  });

  it("a 403 secondary rate limit on the status comment is waited out (retry-after) and the run queued with it", async () => {
    const issue = newIssue();
    const comments = new RegExp(`/issues/${issue}/comments$`);
    github.rateLimitNext("POST", comments, { status: 403, retryAfterSeconds: 1 });
    expect(await post(app, label(issue))).toBe(200);
    expect(attempts("POST", comments)).toEqual([403, 201]);
    const job = await jobOf(issue);
    expect(await job?.getState()).toBe("waiting");
    expect(job?.data.statusCommentId).toBe(statusComments(issue)[0]?.id);
  });

  it("a limit longer than a delivery can wait still queues the run; its status comment is left to the worker", async () => {
    const issue = newIssue();
    const comments = new RegExp(`/issues/${issue}/comments$`);
    github.rateLimitNext("POST", comments, { status: 403, retryAfterSeconds: 60 });
    expect(await post(app, label(issue))).toBe(200);
    expect(attempts("POST", comments)).toEqual([403]);
    const job = await jobOf(issue);
    expect(await job?.getState()).toBe("waiting");
    expect(job?.data.statusCommentId).toBeUndefined();
    expect(statusComments(issue)).toEqual([]);
  });
});
