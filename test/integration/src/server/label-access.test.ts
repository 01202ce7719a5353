/**
 * Who can start a run with the label: only people with write access, as for `/agent-fix`. GitHub adds
 * an issue template's labels in the issue author's name, so a label from an outside user (or a triage
 * user, who may label but not command) must not start a paid run. Deliveries are GitHub's own example
 * `issues.labeled` payload (@octokit/webhooks-examples) pointed at the stand-in's repository, with the
 * sender changed; permissions come from the stand-in's collaborator permission endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppServer } from "../../../../src/server/app-server.js";
import { fixJobId } from "../../../../src/shared/queue/index.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { redisAvailable, testPrefix } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";
import { commentEvent, deliver, webhookExample } from "../../../support/webhooks.js";

const up = await redisAvailable();
const SECRET = "label-access-secret";

describe.skipIf(!up)("the agent-fix label needs write access (GitHub's example payloads)", () => {
  let github: GitHubServer;
  let web: WebhookApp;
  let app: AppServer;
  const prefix = testPrefix();
  const owner = "octo";
  const repo = "public-lib";

  /** GitHub's example `issues.labeled`, on the stand-in's issue, labelled agent-fix by `sender`. */
  function labeled(issue: number, sender: { login: string; type?: "User" | "Bot" }) {
    const stored = github.state.repo(owner, repo);
    const standIn = github.state.issue(owner, repo, issue);
    if (!stored || !standIn) throw new Error("no such issue on the stand-in");
    if (!standIn.labels.includes("agent-fix")) standIn.labels.push("agent-fix");
    const example = webhookExample<Record<string, Record<string, unknown>>>("issues", "labeled");
    const label = { ...example.label, name: "agent-fix" };
    return {
      event: "issues",
      payload: {
        ...example,
        label,
        issue: { ...example.issue, number: issue, title: standIn.title, body: standIn.body, labels: [label] },
        repository: {
          ...example.repository,
          id: stored.id,
          name: repo,
          full_name: `${owner}/${repo}`,
          owner: { ...(example.repository?.owner as object), login: owner },
        },
        installation: { id: stored.installationId },
        sender: { ...example.sender, login: sender.login, type: sender.type ?? "User" },
      },
    };
  }

  const post = (delivery: ReturnType<typeof labeled>) => web.post(delivery);
  const newIssue = (user = "reporter") =>
    github.addIssue(owner, repo, { title: "Crash on empty input", body: "It crashes.", user }).number;
  const jobOf = (issue: number) =>
    app.queue.queue.getJob(fixJobId(github.state.repo(owner, repo)?.id ?? 0, issue));
  const appComments = (issue: number) =>
    github.state.commentsOn(owner, repo, issue).filter((c) => c.user.login === github.bot.login);

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner,
      name: repo,
      files: { "README.md": "x\n" },
      permissions: { writer: "write", keeper: "maintain", tina: "triage", reader: "read" },
    });
    web = await startWebhookApp({
      github,
      secret: SECRET,
      prefix,
      env: { AGENT_FIX_LABEL_BOTS: "release-helper[bot]" },
    });
    app = web.server;
  });

  afterAll(async () => {
    await web?.close();
    await github?.stop();
  });

  it.each([
    ["an outside user's label (an issue template's, added in the author's name)", "stranger"],
    ["a triage user's label", "tina"],
    ["a read-only collaborator's label", "reader"],
  ])("%s starts nothing and gets one reply, however often the label is added", async (_, login) => {
    const issue = newIssue(login);
    const first = { ...labeled(issue, { login }), id: `delivery-${login}` };
    expect(await post(first)).toBe(200);
    expect(await post(first)).toBe(200); // redelivered
    expect(await post(labeled(issue, { login }))).toBe(200); // removed and added again
    expect(await jobOf(issue)).toBeUndefined();
    const replies = appComments(issue);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.body).toContain(`@${login}`);
    expect(replies[0]?.body).toContain("write access");
    expect(replies[0]?.body).toContain("`/agent-fix`");
    expect(github.state.reactions.filter((r) => r.issueNumber === issue)).toEqual([]);
  });

  it("a triage user whose /agent-fix is refused cannot start a run by label either", async () => {
    const issue = newIssue();
    await deliver(
      `${app.url}/api/github/webhooks`,
      SECRET,
      commentEvent(github, { owner, repo, issue }, "/agent-fix", { login: "tina" }),
    );
    expect(await post(labeled(issue, { login: "tina" }))).toBe(200);
    expect(await jobOf(issue)).toBeUndefined();
  });

  it.each([
    ["write", "writer"],
    ["maintain", "keeper"],
  ])("a label from a user with %s access starts a run", async (_, login) => {
    const issue = newIssue();
    expect(await post(labeled(issue, { login }))).toBe(200);
    expect((await jobOf(issue))?.data).toMatchObject({ trigger: "label", requestedBy: login });
    expect(appComments(issue)[0]?.body).toContain("<!-- agent-fix:status -->");
  });

  it("a bot's label is ignored unless the operator named the bot (AGENT_FIX_LABEL_BOTS)", async () => {
    const ignored = newIssue();
    expect(await post(labeled(ignored, { login: "dependabot[bot]", type: "Bot" }))).toBe(200);
    expect(await jobOf(ignored)).toBeUndefined();
    expect(appComments(ignored)).toEqual([]);

    const named = newIssue();
    expect(await post(labeled(named, { login: "release-helper[bot]", type: "Bot" }))).toBe(200);
    expect((await jobOf(named))?.data).toMatchObject({
      trigger: "label",
      requestedBy: "release-helper[bot]",
    });
  });
});
