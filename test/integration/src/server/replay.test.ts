/**
 * A captured signed body re-sent under new X-GitHub-Delivery ids (the signature covers the body, not
 * the delivery id) starts nothing new: before, each new id started a full run, which force-pushed the
 * branch again. And a body that was never acted on (its handling failed) is still taken when GitHub
 * redelivers it, as is one a server died while handling once its claim lapses. GitHub's own example `issues.labeled` payload (@octokit/webhooks-examples) pointed at
 * the stand-in's repository, signed with @octokit/webhooks-methods; the real Probot server, real
 * Redis and a real fix worker whose runs finish at once.
 */
import { createHash } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixJobId } from "../../../../src/shared/queue/index.js";
import { signedBodyKey } from "../../../../src/shared/queue/keys.js";
import { type FixWorker, startFixWorker } from "../../../../worker/main.js";
import { completed } from "../../../../worker/run-end.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { silentLogger } from "../../../support/logs.js";
import { redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";
import { eventTime } from "../../../support/stack-parts.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import { webhookExample } from "../../../support/webhooks.js";

const up = await redisAvailable();
const SECRET = "replay-secret";

describe.skipIf(!up)("a signed body replayed under new delivery ids", () => {
  let github: GitHubServer;
  let web: WebhookApp;
  let worker: FixWorker;
  const prefix = testPrefix();
  const owner = "octo";
  const repo = "replayed";
  const runs: number[] = [];

  /** GitHub's example `issues.labeled` on the stand-in's issue, labelled agent-fix by alice: its bytes. */
  function labeledBody(issue: number): string {
    const stored = github.state.repo(owner, repo);
    const standIn = github.state.issue(owner, repo, issue);
    if (!stored || !standIn) throw new Error("no such issue on the stand-in");
    if (!standIn.labels.includes("agent-fix")) standIn.labels.push("agent-fix");
    const example = webhookExample<Record<string, Record<string, unknown>>>("issues", "labeled");
    const label = { ...example.label, name: "agent-fix" };
    return JSON.stringify({
      ...example,
      label,
      issue: {
        ...example.issue,
        number: issue,
        title: standIn.title,
        body: standIn.body,
        labels: [label],
        updated_at: eventTime(),
      },
      repository: {
        ...example.repository,
        id: stored.id,
        name: repo,
        full_name: `${owner}/${repo}`,
        owner: { ...(example.repository?.owner as object), login: owner },
      },
      installation: { id: stored.installationId },
      sender: { ...example.sender, login: "alice", type: "User" },
    });
  }

  /** POSTs the same bytes with the same signature, as a replayer would, under `deliveryId`. */
  async function post(body: string, deliveryId: string): Promise<number> {
    const response = await fetch(`${web.server.url}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": deliveryId,
        "x-hub-signature-256": await sign(SECRET, body),
      },
      body,
    });
    await response.arrayBuffer();
    return response.status;
  }

  const jobIdOf = (issue: number) => fixJobId(github.state.repo(owner, repo)?.id ?? 0, issue);
  const newIssue = () => github.addIssue(owner, repo, { title: "Crash", body: "It crashes." }).number;

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner,
      name: repo,
      files: { "README.md": "x\n" },
      permissions: { alice: "write" },
    });
    web = await startWebhookApp({ github, secret: SECRET, prefix });
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

  it("starts one job, at once or after the run finished, whatever delivery id it carries", async () => {
    const issue = newIssue();
    const body = labeledBody(issue);
    const queue = web.server.queue.queue;
    // Five copies at once under five ids: one is taken; a copy that comes while it is being handled
    // is answered 409 (not taken), one that comes after it was handled 200 (nothing to do).
    const statuses = await Promise.all([1, 2, 3, 4, 5].map((n) => post(body, `captured-${issue}-${n}`)));
    expect(statuses).toContain(200);
    for (const status of statuses) expect([200, 409]).toContain(status);
    await expect.poll(() => queue.getJobState(jobIdOf(issue)), { timeout: 20_000 }).toBe("completed");
    const finished = await queue.getJob(jobIdOf(issue));

    // Replayed once the run is over (what started a second, force-pushing run before).
    for (const n of [6, 7]) expect(await post(body, `captured-${issue}-${n}`)).toBe(200);
    const after = await queue.getJob(jobIdOf(issue));
    expect(after?.timestamp).toBe(finished?.timestamp);
    expect(await queue.getJobCounts("waiting", "active", "delayed", "prioritized")).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      prioritized: 0,
    });
    expect(runs.filter((n) => n === issue)).toEqual([issue]);
    // One eyes reaction, one status comment: the replays said nothing either.
    expect(github.state.reactions.filter((r) => r.issueNumber === issue)).toHaveLength(1);
    const bot = github.state.commentsOn(owner, repo, issue).filter((c) => c.user.login === github.bot.login);
    expect(bot).toHaveLength(1);
  });

  it("a body whose handling failed is taken when it is redelivered", async () => {
    const issue = newIssue();
    const body = labeledBody(issue);
    // GitHub refuses the permission check once: the handler fails, nothing is queued, the delivery fails.
    github.failNext("GET", /\/collaborators\/alice\/permission$/, 403);
    expect(await post(body, `lost-${issue}-1`)).toBeGreaterThanOrEqual(400);
    expect(await web.server.queue.queue.getJob(jobIdOf(issue))).toBeUndefined();

    // The operator presses "Redeliver": the same bytes under a new id start the run.
    expect(await post(body, `lost-${issue}-2`)).toBe(200);
    await expect.poll(() => runs.filter((n) => n === issue).length, { timeout: 20_000 }).toBe(1);
  });

  it("a body a server died while handling is refused 409 until its claim lapses, then taken", async () => {
    const issue = newIssue();
    const body = labeledBody(issue);
    // What a server that died between claiming the body and queueing its run leaves behind.
    const key = signedBodyKey(web.server.queue, createHash("sha256").update(body).digest("hex"));
    await web.server.queue.redis.set(key, "handling", "EX", 120);
    // Redelivered at once: not taken, and not answered as if it were (GitHub shows it failed).
    expect(await post(body, `crashed-${issue}-1`)).toBe(409);
    expect(await web.server.queue.queue.getJob(jobIdOf(issue))).toBeUndefined();

    await web.server.queue.redis.del(key); // the claim lapsed
    expect(await post(body, `crashed-${issue}-2`)).toBe(200);
    await expect.poll(() => runs.filter((n) => n === issue).length, { timeout: 20_000 }).toBe(1);
  });
});
