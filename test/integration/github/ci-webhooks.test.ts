import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeMiddleware, Probot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkRunEvent, checkSuiteEvent, statusEvent, workflowRunEvent } from "../../support/ci-webhooks.js";
import { type GitHubServer, StandInOctokit, startGitHubServer } from "../../support/github-server.js";
import { type Delivery, deliver, webhookExample } from "../../support/webhooks.js";

const owner = "octo";
const repo = "hooks";
const branch = "agent-fix/issue-5";
const SECRET = "ci-webhooks-secret";

// The CI deliveries issue 26's tests will send: GitHub's example payloads carrying the stand-in's
// ids and state, signed, and received by Probot as the app receives them.
describe("CI webhook deliveries built from GitHub's examples and the stand-in's state", () => {
  let github: GitHubServer;
  let server: Server;
  let url: string;
  let head: string;
  let pullNumber: number;
  let repoId: number;
  const received: { name: string; payload: Record<string, unknown> }[] = [];

  /** Delivers through Probot's verification and routing; what its handler received. */
  async function roundTrip(delivery: Delivery) {
    const before = received.length;
    expect(await deliver(url, SECRET, delivery)).toBe(200);
    expect(received).toHaveLength(before + 1);
    const got = received[before];
    expect(got?.name).toBe(delivery.event);
    // biome-ignore lint/suspicious/noExplicitAny: the payload is read by the tests' assertions
    return got?.payload as Record<string, any>;
  }
  /** The example's own keys are all there, so a handler written against GitHub's docs finds them. */
  const keepsExampleKeys = (payload: Record<string, unknown>, event: string, action: string | undefined) =>
    expect(Object.keys(payload)).toEqual(expect.arrayContaining(Object.keys(webhookExample(event, action))));

  beforeAll(async () => {
    github = await startGitHubServer();
    repoId = (await github.addRepo({ owner, name: repo, files: { "a.txt": "a\n" }, installationId: 7 })).id;
    head = await github.commitAs(github.bot.login, { owner, repo, branch }, { "a.txt": "b\n" });
    pullNumber = github.addPull(owner, repo, { head: branch }).number;
    const probot = new Probot({
      appId: github.appId,
      privateKey: github.keys.privateKeyPem,
      secret: SECRET,
      baseUrl: github.apiUrl,
      Octokit: StandInOctokit,
    });
    const middleware = await createNodeMiddleware(
      (app) => {
        app.onAny((context) => {
          received.push({ name: context.name, payload: context.payload as Record<string, unknown> });
        });
      },
      { probot },
    );
    server = createServer((req, res) => void middleware(req, res, () => res.writeHead(404).end()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await github.stop();
  });

  it("check_suite.completed and check_run.completed of a failing GitHub Actions run on the app's pull request", async () => {
    const { run } = await github.ci.addWorkflowRun(owner, repo, {
      branch,
      jobs: [{ name: "test", conclusion: "failure" }, { name: "lint" }],
    });
    const suite = github.ci.checkSuites.find((s) => s.id === run.suiteId);
    if (!suite) throw new Error("the run has no suite");
    const payload = await roundTrip(await checkSuiteEvent(github, suite));
    keepsExampleKeys(payload, "check_suite", "completed");
    expect(payload.action).toBe("completed");
    expect(payload.installation.id).toBe(7);
    expect(payload.repository).toMatchObject({ id: repoId, full_name: `${owner}/${repo}` });
    expect(payload.check_suite).toMatchObject({
      id: suite.id,
      head_sha: head,
      head_branch: branch,
      status: "completed",
      conclusion: "failure",
      app: { slug: "github-actions" },
    });
    expect(payload.check_suite.pull_requests.map((p: { number: number }) => p.number)).toEqual([pullNumber]);

    const failing = github.ci.checkRuns.find((r) => r.suiteId === suite.id && r.conclusion === "failure");
    if (!failing) throw new Error("no failing check run");
    const runPayload = await roundTrip(await checkRunEvent(github, failing));
    keepsExampleKeys(runPayload, "check_run", "completed");
    expect(runPayload.check_run).toMatchObject({
      id: failing.id,
      name: "test",
      head_sha: head,
      conclusion: "failure",
      check_suite: { id: suite.id, head_branch: branch, conclusion: "failure" },
    });
    // The id is the one the stand-in's REST API answers for.
    const token = github.mintToken(7);
    const rest = await fetch(
      `${github.apiUrl}/repos/${owner}/${repo}/check-runs/${runPayload.check_run.id}`,
      {
        headers: { authorization: `token ${token}` },
      },
    );
    expect(((await rest.json()) as { name: string }).name).toBe("test");
  });

  it("status of a failing commit status, on the branch whose head it is", async () => {
    const status = await github.ci.addStatus(
      owner,
      repo,
      { branch },
      { state: "failure", context: "ci/jenkins", targetUrl: "https://ci.example/9" },
    );
    const payload = await roundTrip(await statusEvent(github, status));
    keepsExampleKeys(payload, "status", undefined);
    expect(payload).toMatchObject({
      sha: head,
      state: "failure",
      context: "ci/jenkins",
      target_url: "https://ci.example/9",
      name: `${owner}/${repo}`,
      installation: { id: 7 },
    });
    expect(payload.branches.map((b: { name: string }) => b.name)).toEqual([branch]);
    expect(payload.commit.sha).toBe(head);
    expect(payload.sender.login).toBe("ci-bot");
  });

  it("workflow_run.completed with the run's jobs URL and the pull request", async () => {
    const { run } = await github.ci.addWorkflowRun(owner, repo, {
      branch,
      jobs: [{ name: "test", conclusion: "failure" }],
    });
    const payload = await roundTrip(await workflowRunEvent(github, run));
    keepsExampleKeys(payload, "workflow_run", "completed");
    expect(payload.workflow_run).toMatchObject({
      id: run.id,
      head_sha: head,
      head_branch: branch,
      status: "completed",
      conclusion: "failure",
      check_suite_id: run.suiteId,
    });
    expect(payload.workflow_run.jobs_url).toBe(
      `${github.apiUrl}/repos/${owner}/${repo}/actions/runs/${run.id}/jobs`,
    );
    expect(payload.workflow_run.pull_requests.map((p: { number: number }) => p.number)).toEqual([pullNumber]);
    expect(payload.workflow).toMatchObject({ name: "CI", path: ".github/workflows/ci.yml" });
    expect(payload.installation.id).toBe(7);
  });
});
