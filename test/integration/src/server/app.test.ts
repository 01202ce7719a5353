/**
 * The webhook side end to end: signed webhooks into the real Probot middleware and server, the real
 * Redis queue, and the GitHub stand-in; outcomes checked on the queue and on the stand-in.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AppServer } from "../../../../src/server/app-server.js";
import type { Trajectory } from "../../../../src/shared/contracts.js";
import {
  type CancelRequest,
  connectRedis,
  fixJobId,
  subscribeToCancels,
} from "../../../../src/shared/queue/index.js";
import { trajectoryUrl } from "../../../../src/shared/trajectory-links.js";
import { createTrajectoryStore } from "../../../../src/shared/trajectory-store.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { redisAvailable, TEST_REDIS_URL } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import {
  closedEvent,
  commentEvent,
  deliver,
  labelEvent,
  pullCommentEvent,
  reviewEvent,
} from "../../../support/webhooks.js";

const up = await redisAvailable();
const SECRET = "webhook-test-secret";

describe.skipIf(!up)("webhooks -> queue (real Probot middleware, real Redis, GitHub stand-in)", () => {
  let github: GitHubServer;
  let web: WebhookApp;
  let app: AppServer;
  let prefix: string;
  let issueCounter = 0;
  const storeFixture = async (name: string) => {
    const path = join(import.meta.dirname, "../../../fixtures/dashboard/gate-fails-once.traj");
    const trajectory = JSON.parse(await readFile(path, "utf8")) as Trajectory;
    const store = createTrajectoryStore(app.queue.redis, { prefix, retentionDays: 1, maxBytes: 1 << 20 });
    await store.save(name, { repo: "octo/demo", issue: 1 }, trajectory);
    return trajectory;
  };
  const owner = "octo";
  const repo = "demo";
  const alice = { login: "alice" };

  const post = (delivery: Parameters<typeof deliver>[2]) =>
    deliver(`${app.url}/api/github/webhooks`, SECRET, delivery);
  const newIssue = () =>
    github.addIssue(owner, repo, { title: `Bug ${++issueCounter}`, body: "It breaks" }).number;
  const repoId = () => github.state.repo(owner, repo)?.id ?? 0;
  const jobOf = (issue: number) => app.queue.queue.getJob(fixJobId(repoId(), issue));
  const commentsBy = (issue: number, login: string) =>
    github.state.commentsOn(owner, repo, issue).filter((c) => c.user.login === login);

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner,
      name: repo,
      files: { "README.md": "x\n" },
      permissions: { alice: "write" },
    });
    web = await startWebhookApp({ github, secret: SECRET });
    ({ server: app, prefix } = web);
  });

  afterAll(async () => {
    await web?.close();
    await github?.stop();
  });

  it("label -> one job (ids only), an eyes reaction and one status comment", async () => {
    const issue = newIssue();
    expect(await post(labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice))).toBe(200);
    const job = await jobOf(issue);
    expect(await job?.getState()).toBe("waiting");
    const status = commentsBy(issue, github.bot.login);
    expect(status).toHaveLength(1);
    expect(status[0]?.body).toContain("<!-- agent-fix:status -->");
    expect(job?.data).toEqual({
      installationId: 1,
      // The repository owner's id: the account whose Marketplace plan's limits apply.
      accountId: repoId() + 1,
      owner,
      repo,
      repoId: repoId(),
      issueNumber: issue,
      requestedBy: "alice",
      trigger: "label",
      deliveryId: expect.any(String),
      statusCommentId: status[0]?.id,
    });
    expect(JSON.stringify(job?.data)).not.toMatch(/ghs_/);
    expect(github.state.reactions.filter((r) => r.issueNumber === issue).map((r) => r.content)).toEqual([
      "eyes",
    ]);
  });

  it("10 redeliveries and the label toggled 5 times -> one job and one status comment", async () => {
    const issue = newIssue();
    const first = {
      ...labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice),
      id: "delivery-1",
    };
    const statuses = await Promise.all(Array.from({ length: 10 }, () => post(first)));
    // One is taken; a copy that comes while it is being handled is answered 409 (not taken: a sender
    // whose first copy never finished sends it again), one that comes after it 200 (nothing to do).
    expect(statuses).toContain(200);
    for (const status of statuses) expect([200, 409]).toContain(status);
    for (let i = 0; i < 5; i++) {
      await post(labelEvent(github, { owner, repo, issue }, "unlabeled", "agent-fix", alice));
      await post(labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice));
    }
    const jobs = await app.queue.queue.getJobs(["waiting", "active", "delayed"]);
    expect(jobs.filter((j) => j.data.issueNumber === issue)).toHaveLength(1);
    const status = commentsBy(issue, github.bot.login);
    expect(status).toHaveLength(1);
    expect(status[0]?.body).toMatch(/Queued/);
    expect(status[0]?.history.some((body) => body.includes("cancelled by @alice"))).toBe(true);
  });

  it("a label by a bot, or another label, is ignored", async () => {
    const issue = newIssue();
    await post(
      labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", {
        login: "renovate[bot]",
        type: "Bot",
      }),
    );
    await post(labelEvent(github, { owner, repo, issue }, "labeled", "bug", alice));
    await post(commentEvent(github, { owner, repo, issue }, "/agent-fix", { login: "ci-bot", type: "Bot" }));
    expect(await jobOf(issue)).toBeUndefined();
    expect(commentsBy(issue, github.bot.login)).toHaveLength(0);
  });

  it("a comment command from a user without write access is refused with a reply", async () => {
    const issue = newIssue();
    expect(await post(commentEvent(github, { owner, repo, issue }, "/agent-fix", { login: "mallory" }))).toBe(
      200,
    );
    expect(await jobOf(issue)).toBeUndefined();
    const replies = commentsBy(issue, github.bot.login);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.body).toMatch(/@mallory only people with write access/);
    // Text that merely mentions the command is not a command.
    await post(commentEvent(github, { owner, repo, issue }, "I think /agent-fix could do this", alice));
    expect(await jobOf(issue)).toBeUndefined();
  });

  it("/agent-fix from a writer starts a run (eyes on the comment); /agent-fix stop cancels it", async () => {
    const issue = newIssue();
    const command = commentEvent(github, { owner, repo, issue }, "/agent-fix", alice);
    await post(command);
    const job = await jobOf(issue);
    expect(job?.data).toMatchObject({ trigger: "comment", requestedBy: "alice" });
    const commentId = (command.payload.comment as { id: number }).id;
    expect(github.state.reactions.some((r) => r.commentId === commentId && r.content === "eyes")).toBe(true);
    await post(commentEvent(github, { owner, repo, issue }, "/agent-fix stop", alice));
    expect(await jobOf(issue)).toBeUndefined();
    const status = commentsBy(issue, github.bot.login);
    expect(status.at(-1)?.body).toContain("cancelled by @alice (/agent-fix stop)");
  });

  describe("cancelling a running job", () => {
    let worker: Worker | undefined;
    const connections: Redis[] = [];
    afterEach(async () => {
      await worker?.close(true);
      for (const c of connections.splice(0)) c.disconnect();
    });

    it("unlabel and close publish a cancel that reaches the worker holding the job", async () => {
      // Earlier tests left waiting jobs; this worker must pick up only the one made here.
      await app.queue.queue.drain();
      const received: CancelRequest[] = [];
      const aborted: string[] = [];
      const connection = await connectRedis(TEST_REDIS_URL, "worker");
      const subscriber = await connectRedis(TEST_REDIS_URL, "subscriber");
      connections.push(connection, subscriber);
      let release!: () => void;
      const stopped = new Promise<void>((resolve) => {
        release = resolve;
      });
      let active!: () => void;
      const isActive = new Promise<void>((resolve) => {
        active = resolve;
      });
      worker = new Worker(
        app.queue.name,
        async (job: Job, _token?: string, signal?: AbortSignal) => {
          active();
          await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve()));
          aborted.push(String(job.id));
          await stopped; // a run takes a moment to stop (sandbox removal, final status comment)
        },
        { connection, prefix, removeOnComplete: { count: 0 } },
      );
      await subscribeToCancels(subscriber, app.queue.cancelChannel, (request) => {
        received.push(request);
        worker?.cancelJob(request.jobId, request.reason);
      });

      const issue = newIssue();
      await post(labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice));
      await isActive;
      await post(labelEvent(github, { owner, repo, issue }, "unlabeled", "agent-fix", alice));
      await expect.poll(() => aborted).toEqual([fixJobId(repoId(), issue)]);
      expect(received).toEqual([expect.objectContaining({ by: "alice", reason: "label removed" })]);
      // The running job's status comment is the worker's to finish, not the handler's.
      expect(commentsBy(issue, github.bot.login)[0]?.body).not.toContain("cancelled");
      // The label added again while that run is still stopping: no second job, and the person is told.
      await post(labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice));
      expect(commentsBy(issue, github.bot.login).at(-1)?.body).toContain(
        "the previous run is still stopping",
      );
      release();

      // Closing an issue with a waiting job removes it.
      await worker.close();
      worker = undefined;
      const other = newIssue();
      await post(labelEvent(github, { owner, repo, issue: other }, "labeled", "agent-fix", alice));
      expect(await (await jobOf(other))?.getState()).toBe("waiting");
      await post(closedEvent(github, { owner, repo, issue: other }, { login: "bob" }));
      expect(await jobOf(other)).toBeUndefined();
      expect(commentsBy(other, github.bot.login)[0]?.body).toContain("cancelled by @bob (issue closed)");
    });
  });

  it("refuses a webhook with a bad signature and enqueues nothing", async () => {
    const issue = newIssue();
    const status = await deliver(
      `${app.url}/api/github/webhooks`,
      "wrong-secret",
      labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice),
    );
    expect(status).toBeGreaterThanOrEqual(400);
    expect(await jobOf(issue)).toBeUndefined();
  });

  it("reports Redis on /healthz", async () => {
    const response = await fetch(`${app.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", redis: "ok" });
  });

  it("serves a trajectory only through the signed link the app posts", async () => {
    // Only in Redis, where the worker stores it: no file on this process's disk.
    const trajectory = await storeFixture("octo-demo-1-1");
    const link = trajectoryUrl(app.url, SECRET, "octo-demo-1-1.traj");
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain("Go to the failing step (3)");
    const ok = await fetch(`${link}&format=json`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual(trajectory);
    // A different first character whatever the signature starts with (a fixed "0" left one in 16 links intact).
    const tampered = link.replace(/sig=(\w)/, (_m, first: string) => `sig=${first === "0" ? "1" : "0"}`);
    expect((await fetch(tampered)).status).toBe(404);
    expect((await fetch(`${app.url}/trajectories/octo-demo-1-1.traj`)).status).toBe(404);
    const traversal = trajectoryUrl(app.url, SECRET, "x.traj").replace("x.traj", "..%2F..%2Fetc%2Fpasswd");
    expect((await fetch(traversal)).status).toBe(404);
  });

  it("trajectory links expire; a changed expiry or a malformed URL gets 404, not 500", async () => {
    await storeFixture("octo-demo-2-1");
    const name = "octo-demo-2-1.traj";
    const week = 7 * 24 * 60 * 60 * 1000;
    const link = trajectoryUrl(app.url, SECRET, name);
    const expires = Number(new URL(link).searchParams.get("expires"));
    // The default lifetime is 7 days.
    expect(Math.abs(expires * 1000 - (Date.now() + week))).toBeLessThan(60_000);
    expect((await fetch(link)).status).toBe(200);
    // Signed eight days ago for a week: expired, and said so.
    const old = trajectoryUrl(app.url, SECRET, name, { now: Date.now() - 8 * 24 * 60 * 60 * 1000 });
    const gone = await fetch(old);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain("expired");
    // Pushing the expiry out breaks the signature.
    expect((await fetch(old.replace(/expires=\d+/, `expires=${expires}`))).status).toBe(404);
    for (const path of ["%E0%A4%A.traj", "%", "%ZZ.traj?sig=1&expires=1"]) {
      expect((await fetch(`${app.url}/trajectories/${path}`)).status, path).toBe(404);
    }
  });

  it("a GitHub error at the start leaves no half-started run; the redelivery then starts it once", async () => {
    const issue = newIssue();
    const delivery = {
      ...labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice),
      id: "flaky-1",
    };
    // 403, as for a locked issue (a 5xx would be retried by Probot's Octokit first).
    github.failNext("POST", new RegExp(`/issues/${issue}/comments$`), 403);
    expect(await post(delivery)).toBeGreaterThanOrEqual(400);
    expect(await jobOf(issue)).toBeUndefined();
    expect(await post(delivery)).toBe(200);
    expect(await (await jobOf(issue))?.getState()).toBe("waiting");
    expect(commentsBy(issue, github.bot.login)).toHaveLength(1);
  });

  /** A pull request on the stand-in: by default the app's own, for `issue`'s fix branch. */
  const addPull = (head: string, author = github.bot) =>
    github.addPull(owner, repo, { head, user: author }).number;

  it("changes requested on the app's pull request by a writer -> one review job on the issue's id; others nothing", async () => {
    const issue = newIssue();
    const pull = addPull(`agent-fix/issue-${issue}`);
    await post(reviewEvent(github, { owner, repo, pull }, "approved", alice));
    await post(reviewEvent(github, { owner, repo, pull }, "commented", alice));
    expect(commentsBy(pull, github.bot.login)).toHaveLength(0);
    expect(await jobOf(issue)).toBeUndefined();

    const review = reviewEvent(github, { owner, repo, pull }, "changes_requested", alice, {
      body: "Please rename it",
      comments: [{ path: "README.md", line: 1, body: "here" }],
    });
    expect(await post(review)).toBe(200);
    const job = await jobOf(issue);
    // Ids only: the review's text is read by the worker, never stored in Redis.
    expect(job?.data).toMatchObject({
      issueNumber: issue,
      pullNumber: pull,
      reviewId: (review.payload.review as { id: number }).id,
      trigger: "review",
      requestedBy: "alice",
    });
    expect(JSON.stringify(job?.data)).not.toContain("Please rename it");
    const replies = commentsBy(pull, github.bot.login);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.body).toContain("@alice agent-fix is working on your review");
    // The status comment lives on the issue, as for issue runs.
    expect(commentsBy(issue, github.bot.login)[0]?.body).toContain("<!-- agent-fix:status -->");

    // The same issue cannot run twice: a label while it is queued is refused; a second review waits
    // for a follow-up round (test/integration/src/server/review-feedback.test.ts).
    expect(await post(labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice))).toBe(200);
    expect(await post(reviewEvent(github, { owner, repo, pull }, "changes_requested", alice))).toBe(200);
    expect((await jobOf(issue))?.data.trigger).toBe("review");
    const later = commentsBy(pull, github.bot.login);
    expect(later).toHaveLength(2);
    expect(later[1]?.body).toContain("will be addressed once it has finished");
  });

  it("a review from a user without write access is refused; reviews on pull requests not the app's are ignored", async () => {
    github.state.repo(owner, repo)?.permissions.set("reader", "read");
    const issue = newIssue();
    const pull = addPull(`agent-fix/issue-${issue}`);
    await post(reviewEvent(github, { owner, repo, pull }, "changes_requested", { login: "reader" }));
    const replies = commentsBy(pull, github.bot.login);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.body).toContain("only from people with write access");
    expect(await jobOf(issue)).toBeUndefined();

    const human = { login: "alice", id: 7, type: "User" as const };
    const other = newIssue();
    const byPerson = addPull(`agent-fix/issue-${other}`, human); // the app's branch name, a person's PR
    const feature = addPull("feature/x");
    const bot = addPull("feature/y");
    for (const number of [byPerson, feature, bot]) {
      expect(await post(reviewEvent(github, { owner, repo, pull: number }, "changes_requested", alice))).toBe(
        200,
      );
      expect(commentsBy(number, github.bot.login)).toHaveLength(0);
    }
    expect(await jobOf(other)).toBeUndefined();
    // A bot's review (the app's own, or another app's) never starts anything.
    await post(
      reviewEvent(github, { owner, repo, pull }, "changes_requested", { login: "ci[bot]", type: "Bot" }),
    );
    expect(commentsBy(pull, github.bot.login)).toHaveLength(1);
  });

  it("another bot's pull request on agent-fix/issue-N, or one from a fork, is not the app's: no run is queued", async () => {
    const otherBot = { login: "other-app[bot]", id: 91_000, type: "Bot" as const };
    const issue = newIssue();
    const pull = addPull(`agent-fix/issue-${issue}`, otherBot);
    expect(await post(reviewEvent(github, { owner, repo, pull }, "changes_requested", alice))).toBe(200);
    expect(await post(pullCommentEvent(github, { owner, repo, pull }, "/agent-fix\nRedo it.", alice))).toBe(
      200,
    );
    expect(await jobOf(issue)).toBeUndefined();
    const replies = commentsBy(pull, github.bot.login);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.body).toContain("not on this one");

    // The app's own bot, but the branch is a fork's: not the app's either.
    const forked = addPull(`agent-fix/issue-${issue}`);
    const delivery = reviewEvent(github, { owner, repo, pull: forked }, "changes_requested", alice);
    const head = (delivery.payload.pull_request as { head: { repo: { full_name: string } } }).head;
    head.repo.full_name = `mallory/${repo}`;
    expect(await post(delivery)).toBe(200);
    expect(await jobOf(issue)).toBeUndefined();
    expect(commentsBy(forked, github.bot.login)).toHaveLength(0);
  });

  it("/agent-fix on the app's pull request starts a review run of its issue; stop cancels it; other PRs get a reply", async () => {
    const issue = newIssue();
    const pull = addPull(`agent-fix/issue-${issue}`);
    const start = pullCommentEvent(
      github,
      { owner, repo, pull },
      "/agent-fix\nAlso handle empty input.",
      alice,
    );
    expect(await post(start)).toBe(200);
    const commentId = (start.payload.comment as { id: number }).id;
    expect((await jobOf(issue))?.data).toMatchObject({
      issueNumber: issue,
      pullNumber: pull,
      commentId,
      trigger: "review",
    });
    expect(github.state.reactions.some((r) => r.commentId === commentId && r.content === "eyes")).toBe(true);
    expect(commentsBy(pull, github.bot.login)).toHaveLength(0);

    expect(await post(pullCommentEvent(github, { owner, repo, pull }, "/agent-fix stop", alice))).toBe(200);
    expect(await jobOf(issue)).toBeUndefined();
    expect(commentsBy(issue, github.bot.login)[0]?.body).toContain(
      "run cancelled by @alice (/agent-fix stop)",
    );

    const human = { login: "alice", id: 7, type: "User" as const };
    const other = addPull("feature/z", human);
    expect(await post(pullCommentEvent(github, { owner, repo, pull: other }, "/agent-fix", alice))).toBe(200);
    expect(commentsBy(other, github.bot.login)[0]?.body).toContain("not on this one");
  });

  it("/agent-fix rebase on the app's pull request queues one rebase job; while a run is live it is declined; on an issue it is pointed to the pull request", async () => {
    const issue = newIssue();
    const pull = addPull(`agent-fix/issue-${issue}`);
    const first = pullCommentEvent(github, { owner, repo, pull }, "/agent-fix rebase", alice);
    expect(await post(first)).toBe(200);
    const commentId = (first.payload.comment as { id: number }).id;
    expect((await jobOf(issue))?.data).toMatchObject({
      issueNumber: issue,
      pullNumber: pull,
      commentId,
      trigger: "rebase",
      requestedBy: "alice",
    });
    expect(github.state.reactions.some((r) => r.commentId === commentId && r.content === "eyes")).toBe(true);

    // The issue's slot is taken (by that rebase job): a second ask is declined once, with a reply.
    expect(await post(pullCommentEvent(github, { owner, repo, pull }, "/agent-fix rebase", alice))).toBe(200);
    expect(commentsBy(pull, github.bot.login).map((c) => c.body)).toEqual([
      expect.stringContaining("@alice an agent-fix run for #"),
    ]);
    expect((await jobOf(issue))?.data.commentId).toBe(commentId);

    const other = newIssue();
    expect(await post(commentEvent(github, { owner, repo, issue: other }, "/agent-fix rebase", alice))).toBe(
      200,
    );
    expect(await jobOf(other)).toBeUndefined();
    expect(commentsBy(other, github.bot.login).map((c) => c.body)).toEqual([
      expect.stringContaining("works on agent-fix's pull request"),
    ]);
  });
});
