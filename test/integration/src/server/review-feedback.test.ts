/**
 * Review feedback that arrives while a run of the issue is queued or running is queued, not refused:
 * once that run has ended, one follow-up review run takes everything that came in meanwhile (reviews
 * and comment commands, oldest first). Real Probot server, real Redis, the GitHub stand-in, and the
 * real fix worker (worker/main.ts) with a processor that holds the first run until the test lets go.
 */
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppServer } from "../../../../src/server/app-server.js";
import { type FixJobData, fixJobId } from "../../../../src/shared/queue/index.js";
import { type FixWorker, startFixWorker } from "../../../../worker/main.js";
import { completed } from "../../../../worker/run-end.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { silentLogger } from "../../../support/logs.js";
import { redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import { commentEvent, labelEvent, pullCommentEvent, reviewEvent } from "../../../support/webhooks.js";

const up = await redisAvailable();
const SECRET = "feedback-secret";

describe.skipIf(!up)("review feedback while a run of the issue is queued or running", () => {
  let github: GitHubServer;
  let app: AppServer;
  let worker: FixWorker;
  let web: WebhookApp;
  const prefix = testPrefix();
  const owner = "octo";
  const repo = "reviewed";
  const alice = { login: "alice" };
  const bob = { login: "bob" };
  const ran: FixJobData[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));

  const post = (delivery: Parameters<WebhookApp["post"]>[0]) => web.post(delivery);

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner,
      name: repo,
      files: { "README.md": "x\n" },
      permissions: { alice: "write", bob: "write" },
    });
    web = await startWebhookApp({ github, secret: SECRET, prefix });
    app = web.server;
    worker = await startFixWorker({
      redisUrl: TEST_REDIS_URL,
      prefix,
      process: async (job: Job<FixJobData>) => {
        ran.push(job.data);
        if (ran.length === 1) await held;
        return completed("done");
      },
      logger: silentLogger(),
    });
  });

  afterAll(async () => {
    release();
    await worker?.shutdown(0);
    await web?.close();
    await github?.stop();
  });

  it("is queued with a reply, and one follow-up round after the run takes all of it", async () => {
    const issue = github.addIssue(owner, repo, { title: "Bug", body: "It breaks" }).number;
    const repoId = github.state.repo(owner, repo)?.id ?? 0;
    const pull = github.addPull(owner, repo, { head: `agent-fix/issue-${issue}` }).number;
    expect(await post(labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", alice))).toBe(200);
    await expect.poll(() => ran.length, { timeout: 20_000 }).toBe(1);

    // While the issue's run is running: two reviews and a comment command on the pull request.
    const first = reviewEvent(github, { owner, repo, pull }, "changes_requested", alice, {
      body: "Rename the helper.",
      comments: [{ path: "README.md", line: 1, body: "Say what it is." }],
    });
    const second = reviewEvent(github, { owner, repo, pull }, "changes_requested", bob, {
      body: "Add a test.",
    });
    const command = pullCommentEvent(
      github,
      { owner, repo, pull },
      "/agent-fix\nAnd a changelog line.",
      alice,
    );
    for (const delivery of [first, second, command]) expect(await post(delivery)).toBe(200);
    const onPull = github.state.commentsOn(owner, repo, pull).map((c) => c.body);
    expect(onPull.filter((b) => b.includes("will be addressed once it has finished"))).toHaveLength(3);
    expect(onPull.join("\n")).not.toContain("was not picked up");
    // A comment on the issue itself is no review: it is still a plain duplicate start.
    expect(await post(commentEvent(github, { owner, repo, issue }, "/agent-fix", alice))).toBe(200);

    release();
    await expect.poll(() => ran.length, { timeout: 20_000 }).toBe(2);
    const idOf = (delivery: typeof first, key: "review" | "comment") =>
      (delivery.payload[key] as { id: number }).id;
    expect(ran[1]).toMatchObject({
      trigger: "review",
      issueNumber: issue,
      pullNumber: pull,
      requestedBy: "alice",
      feedback: [
        { reviewId: idOf(first, "review"), by: "alice" },
        { reviewId: idOf(second, "review"), by: "bob" },
        { commentId: idOf(command, "comment"), by: "alice" },
      ],
    });
    await expect
      .poll(() => app.queue.queue.getJobState(fixJobId(repoId, issue)), { timeout: 20_000 })
      .toBe("completed");
    // One round only: nothing else was queued after it.
    expect(ran).toHaveLength(2);
  });
});
