import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueFix, type FixJobData } from "../../../../src/shared/queue/index.js";
import { readAccountPlan } from "../../../../src/shared/queue/plans.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { redisAvailable } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import { type Example, webhookExample } from "../../../support/webhooks.js";

// Signed deliveries of GitHub's own example payloads (@octokit/webhooks-examples) through the real
// webhook server into real Redis.
const up = await redisAvailable();
const SECRET = "marketplace-test-secret";

describe.skipIf(!up)("marketplace and installation events (real Probot middleware, real Redis)", () => {
  let github: GitHubServer;
  let web: WebhookApp;
  const post = (event: string, payload: Example) => web.post({ event, payload });
  const names = () => web.server.queue;
  const planOf = (accountId: number) => readAccountPlan(names().redis, names(), accountId);

  beforeAll(async () => {
    github = await startGitHubServer();
    web = await startWebhookApp({ github, secret: SECRET });
  });
  afterAll(async () => {
    await web?.close();
    await github?.stop();
  });

  it("a purchase sets the account's plan, a change replaces it, a pending change waits, a cancellation drops it", async () => {
    const purchased = webhookExample("marketplace_purchase", "purchased");
    const account = (purchased.marketplace_purchase as { account: { id: number } }).account.id;
    expect(await post("marketplace_purchase", purchased)).toBe(200);
    expect(await planOf(account)).toMatchObject({ id: 435, name: "Basic Plan" });

    const changed = webhookExample("marketplace_purchase", "changed");
    const newPlan = (changed.marketplace_purchase as { plan: { id: number; name: string } }).plan;
    (changed.marketplace_purchase as { account: { id: number } }).account.id = account;
    expect(await post("marketplace_purchase", changed)).toBe(200);
    expect(await planOf(account)).toMatchObject({ id: newPlan.id, name: newPlan.name });

    // No example of pending_change: GitHub sends it with the plan the account moves to later.
    const pending: Example = {
      ...webhookExample("marketplace_purchase", "purchased"),
      action: "pending_change",
    };
    (pending.marketplace_purchase as { plan: { id: number; name: string } }).plan = {
      ...newPlan,
      id: 999,
      name: "Later",
    };
    expect(await post("marketplace_purchase", pending)).toBe(200);
    expect(await planOf(account)).toMatchObject({ id: newPlan.id });

    const cancelled = webhookExample("marketplace_purchase", "cancelled");
    (cancelled.marketplace_purchase as { account: { id: number } }).account.id = account;
    expect(await post("marketplace_purchase", cancelled)).toBe(200);
    expect(await planOf(account)).toBeNull();
  });

  it("uninstalling cancels the installation's queued runs and leaves other installations' alone", async () => {
    const deleted = webhookExample("installation", "deleted");
    const installationId = (deleted.installation as { id: number }).id;
    const job = (installation: number, issueNumber: number): FixJobData => ({
      installationId: installation,
      owner: "octo",
      repo: "demo",
      repoId: 7,
      issueNumber,
      requestedBy: "alice",
      trigger: "label",
      deliveryId: `d-${installation}-${issueNumber}`,
    });
    const queue = names();
    const mine = [
      await enqueueFix(queue, job(installationId, 1)),
      await enqueueFix(queue, job(installationId, 2)),
    ];
    const other = await enqueueFix(queue, job(installationId + 1, 3));
    expect(await post("installation", deleted)).toBe(200);
    for (const run of mine) expect(await queue.queue.getJob(run.jobId)).toBeUndefined();
    expect(await queue.queue.getJobState(other.jobId)).toBe("waiting");
  });
});
