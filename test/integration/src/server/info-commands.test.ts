/**
 * `/agent-fix help` and `/agent-fix status`: one reply to anyone who may read the repository, nothing
 * enqueued, at most INFO_REPLIES_PER_HOUR a person and issue an hour. The real webhook app against the
 * GitHub stand-in and real Redis, no worker: the runs it starts stay queued.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INFO_REPLIES_PER_HOUR, latestRunOf } from "../../../../src/server/handlers/info-commands.js";
import { fixJobId } from "../../../../src/shared/queue/index.js";
import { pullRequestCosts } from "../../../../src/shared/queue/pull-costs.js";
import { createTrajectoryStore } from "../../../../src/shared/trajectory-store.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { submittedTrajectory } from "../../../support/published.js";
import { redisAvailable } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import { commentEvent, labelEvent, pullCommentEvent } from "../../../support/webhooks.js";

const up = await redisAvailable();
const SECRET = "info-commands-secret";

describe.skipIf(!up)("/agent-fix help and /agent-fix status", () => {
  let github: GitHubServer;
  let web: WebhookApp;
  const owner = "octo";
  const repo = "info-lib";
  let repoId = 0;

  const newIssue = () =>
    github.addIssue(owner, repo, { title: "Crash on empty input", body: "It crashes." }).number;
  const say = (issue: number, body: string, login: string) =>
    web.post(commentEvent(github, { owner, repo, issue }, body, { login }));
  const repliesTo = (login: string, issue: number) =>
    github.state
      .commentsOn(owner, repo, issue)
      .filter((c) => c.user.login === github.bot.login && c.body.startsWith(`@${login} `))
      .map((c) => c.body);
  const jobs = () => web.server.queue.queue.getJobCounts();

  beforeAll(async () => {
    github = await startGitHubServer();
    repoId = (
      await github.addRepo({
        owner,
        name: repo,
        files: { "README.md": "x\n" },
        permissions: { writer: "write", reader: "read" },
      })
    ).id;
    web = await startWebhookApp({ github, secret: SECRET });
  });
  afterAll(async () => {
    await web?.close();
    await github?.stop();
  });

  it("help: one reply listing every command, to someone with read access; nothing enqueued", async () => {
    const issue = newIssue();
    expect(await say(issue, "/agent-fix help", "reader")).toBeLessThan(300);
    const [help] = repliesTo("reader", issue);
    for (const command of [
      "`/agent-fix` on an issue",
      "`/agent-fix stop`",
      "`/agent-fix status`",
      "`/agent-fix help`",
    ])
      expect(help).toContain(command);
    expect(help).toContain("`agent-fix` label");
    expect(repliesTo("reader", issue)).toHaveLength(1);
    expect(await web.server.queue.queue.getJob(fixJobId(repoId, issue))).toBeUndefined();
  });

  it("status: none, then queued with its place in the queue; never a start", async () => {
    const first = newIssue();
    const second = newIssue();
    expect(await say(second, "/agent-fix status", "reader")).toBeLessThan(300);
    expect(repliesTo("reader", second)).toEqual([
      `@reader No agent-fix run is queued or running for #${second}. Add the \`agent-fix\` label to the issue or comment \`/agent-fix\` on it to start one.`,
    ]);
    expect(await web.server.queue.queue.getJob(fixJobId(repoId, second))).toBeUndefined();

    for (const issue of [first, second])
      expect(
        await web.post(
          labelEvent(github, { owner, repo, issue }, "labeled", "agent-fix", { login: "writer" }),
        ),
      ).toBeLessThan(300);
    const counts = await jobs();
    expect(await say(second, "/agent-fix status", "reader")).toBeLessThan(300);
    expect(repliesTo("reader", second)[1]).toBe(
      `@reader A run for #${second} is queued (number 2 in the queue); it starts when a worker is free.`,
    );
    expect(await jobs()).toEqual(counts);
  });

  it("no reply to someone who cannot read the repository, nor past the hourly limit", async () => {
    const issue = newIssue();
    expect(await say(issue, "/agent-fix status", "stranger")).toBeLessThan(300);
    expect(repliesTo("stranger", issue)).toEqual([]);
    for (let i = 0; i < INFO_REPLIES_PER_HOUR + 2; i++)
      expect(await say(issue, "/agent-fix help", "reader")).toBeLessThan(300);
    expect(repliesTo("reader", issue)).toHaveLength(INFO_REPLIES_PER_HOUR);
  });

  it("a running run's cost so far and signed page come from the newest stored trajectory of the issue", async () => {
    const redis = web.server.queue.redis;
    const store = createTrajectoryStore(redis, { prefix: web.prefix, retentionDays: 1, maxBytes: 1_000_000 });
    const running = (cost: number, finished: string | null) => {
      const trajectory = submittedTrajectory("Working.");
      trajectory.info.model_stats.instance_cost = cost;
      trajectory.info.finished_at = finished;
      trajectory.info.started_at = new Date().toISOString(); // within the retention period
      return trajectory;
    };
    await store.save(
      "octo-info-lib-40-1",
      { repo: "octo/info-lib", repoId, issue: 40 },
      running(0.5, "2026-12-01T10:00:00Z"),
    );
    await store.save(
      "octo-info-lib-40-2",
      { repo: "octo/info-lib", repoId, issue: 40 },
      running(0.0123, null),
    );
    await store.save(
      "octo-info-lib-41-1",
      { repo: "octo/info-lib", repoId, issue: 41 },
      running(0.9, "2026-12-01T10:00:00Z"),
    );
    const runOf = latestRunOf(store, { publicUrl: "https://agent-fix.example/", secret: "s" });
    const run = await runOf(repoId, 40);
    expect(run?.costUsd).toBe(0.0123);
    expect(run?.url).toMatch(
      /^https:\/\/agent-fix\.example\/trajectories\/octo-info-lib-40-2\.traj\?expires=\d+&sig=[0-9a-f]{32}$/,
    );
    // A finished run is not the current one; without PUBLIC_URL there is no page to link.
    expect(await runOf(repoId, 41)).toBeNull();
    expect(await latestRunOf(store, { secret: "s" })(repoId, 40)).toEqual({ costUsd: 0.0123 });
  });

  it("status on the issue or on the app's pull request: what every run on that pull request has cost", async () => {
    const issue = newIssue();
    const branch = `agent-fix/issue-${issue}`;
    await github.commitAs(github.bot.login, { owner, repo, branch }, { "fix.txt": "fix\n" }, "The fix");
    const pull = github.addPull(owner, repo, { body: `Fixes #${issue}`, head: branch }).number;
    const costs = pullRequestCosts(web.server.queue.redis, web.server.queue);
    await costs.add(repoId, pull, 0.5);
    await costs.add(repoId, pull, 0.25);
    const said = `Model cost of every run on pull request #${pull} so far: $0.7500.`;
    expect(await say(issue, "/agent-fix status", "reader")).toBeLessThan(300);
    expect(repliesTo("reader", issue)).toEqual([
      `@reader No agent-fix run is queued or running for #${issue}. Add the \`agent-fix\` label to the issue or comment \`/agent-fix\` on it to start one. ${said}`,
    ]);
    expect(
      await web.post(
        pullCommentEvent(github, { owner, repo, pull }, "/agent-fix status", { login: "reader" }),
      ),
    ).toBeLessThan(300);
    expect(repliesTo("reader", pull)).toEqual([
      expect.stringContaining(`run is queued or running for #${issue}.`),
    ]);
    expect(repliesTo("reader", pull)[0]).toContain(said);
    // Another issue with no pull request of the app's says nothing of costs.
    const other = newIssue();
    expect(await say(other, "/agent-fix status", "reader")).toBeLessThan(300);
    expect(repliesTo("reader", other)[0]).not.toContain("Model cost");
  });
});
