/**
 * A webhook GitHub sends again (same X-GitHub-Delivery) after the run it started has finished is
 * acknowledged and does nothing: before, it started a second run, which replaced the branch and the
 * review commits on it. Real Probot server, real Redis, the GitHub stand-in, a real fix worker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppServer } from "../../../../src/server/app-server.js";
import { fixJobId } from "../../../../src/shared/queue/index.js";
import { type FixWorker, startFixWorker } from "../../../../worker/main.js";
import { completed } from "../../../../worker/run-end.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { silentLogger } from "../../../support/logs.js";
import { redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import { labelEvent } from "../../../support/webhooks.js";

const up = await redisAvailable();
const SECRET = "redelivery-secret";

describe.skipIf(!up)("a redelivered webhook", () => {
  let github: GitHubServer;
  let app: AppServer;
  let worker: FixWorker;
  let web: WebhookApp;
  const prefix = testPrefix();
  const owner = "octo";
  const repo = "redelivered";
  const runs: number[] = [];

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner,
      name: repo,
      files: { "README.md": "x\n" },
      permissions: { alice: "write" },
    });
    web = await startWebhookApp({ github, secret: SECRET, prefix });
    app = web.server;
    // A worker whose runs finish at once: what matters here is that the run is over.
    worker = await startFixWorker({
      redisUrl: TEST_REDIS_URL,
      prefix,
      process: async (job) => {
        runs.push(job.data.issueNumber);
        return completed("done");
      },
      logger: silentLogger(),
    });
  });

  afterAll(async () => {
    await worker?.shutdown(0);
    await web?.close();
    await github?.stop();
  });

  it("after its run finished is answered 2xx and starts no second run; a new delivery does", async () => {
    const issue = github.addIssue(owner, repo, { title: "Bug", body: "It breaks" }).number;
    const repoId = github.state.repo(owner, repo)?.id ?? 0;
    const jobId = fixJobId(repoId, issue);
    const delivery = {
      ...labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", { login: "alice" }),
      id: "delivery-redelivered-1",
    };
    const post = (d: typeof delivery) => web.post(d);
    const bot = () =>
      github.state.commentsOn(owner, repo, issue).filter((c) => c.user.login === github.bot.login);

    expect(await post(delivery)).toBe(200);
    await expect.poll(() => app.queue.queue.getJobState(jobId), { timeout: 20_000 }).toBe("completed");
    const finished = await app.queue.queue.getJob(jobId);
    const statusEdits = bot()[0]?.history.length;

    expect(await post(delivery)).toBe(200);
    expect(await post(delivery)).toBe(200);
    // The same finished job, no new one queued, nothing said on the issue.
    const after = await app.queue.queue.getJob(jobId);
    expect(after?.timestamp).toBe(finished?.timestamp);
    expect(await after?.getState()).toBe("completed");
    expect(await app.queue.queue.getJobCounts("waiting", "active", "delayed")).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
    });
    expect(bot()).toHaveLength(1);
    expect(bot()[0]?.history).toHaveLength(statusEdits ?? 0);
    expect(runs).toEqual([issue]);

    // A new label event (its own body, as GitHub's differ) is a new request: it runs again.
    const again = labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", { login: "alice" });
    expect(await post({ ...again, id: "delivery-redelivered-2" })).toBe(200);
    await expect.poll(() => runs.length, { timeout: 20_000 }).toBe(2);
  });
});
