import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubServer, type StandInJob, startGitHubServer } from "../../support/github-server.js";
import { installationApi } from "../../support/installation.js";
import { expectDocumented } from "../../support/openapi.js";
import { type RestCall, restCaller } from "../../support/rest-call.js";

const owner = "octo";
const repo = "actions";
const branch = "agent-fix/issue-3";
const FAILING_LOG = [
  "Run npm test",
  "> vitest run",
  " FAIL  test/a.test.ts > a is two",
  "AssertionError: expected 1 to be 2",
  "##[error]Process completed with exit code 1.",
].join("\n");

interface LogsApi {
  rest: {
    actions: {
      downloadJobLogsForWorkflowRun(params: { owner: string; repo: string; job_id: number }): Promise<{
        status: number;
        data: unknown;
      }>;
    };
  };
}

// GitHub Actions runs, their jobs and the jobs' logs, as the app will read them after a failing CI,
// checked against GitHub's OpenAPI description of each answer.
describe("the stand-in's GitHub Actions runs, jobs and logs", () => {
  let github: GitHubServer;
  let token: string;
  let head: string;
  let runId: number;
  let jobs: StandInJob[];
  let call: RestCall;
  const R = `/repos/${owner}/${repo}`;

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({ owner, name: repo, files: { "src/a.ts": "export const a = 1;\n" } });
    github.setInstallationPermissions(1, {
      contents: "write",
      pull_requests: "write",
      checks: "read",
      actions: "read",
    });
    head = await github.commitAs(
      github.bot.login,
      { owner, repo, branch },
      { "src/a.ts": "export const a = 3;\n" },
    );
    token = github.mintToken(1);
    call = restCaller(github, token);
    const pull = await fetch(`${github.apiUrl}${R}/pulls`, {
      method: "POST",
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "Fix a", head: branch, base: "main" }),
    });
    expect(pull.status).toBe(201);
    const seeded = await github.ci.addWorkflowRun(owner, repo, {
      branch,
      jobs: [
        {
          name: "test",
          conclusion: "failure",
          steps: [
            { name: "Set up job", conclusion: "success" },
            { name: "Run npm test", conclusion: "failure" },
          ],
          log: FAILING_LOG,
          annotations: [
            {
              path: "test/a.test.ts",
              start_line: 4,
              end_line: 4,
              annotation_level: "failure",
              message: "AssertionError: expected 1 to be 2",
            },
          ],
        },
        { name: "lint", log: "Run npm run lint\nAll good." },
      ],
    });
    runId = seeded.run.id;
    jobs = seeded.jobs;
  });
  afterAll(() => github.stop());

  it("lists a branch's workflow runs, filtered by branch, commit and conclusion, and gets one", async () => {
    const list = await call("GET", `${R}/actions/runs?branch=${encodeURIComponent(branch)}`);
    expect(list.status).toBe(200);
    expectDocumented("/repos/{owner}/{repo}/actions/runs", "get", 200, list.body);
    expect(list.body.total_count).toBe(1);
    const [run] = list.body.workflow_runs;
    expect(run).toMatchObject({
      id: runId,
      head_sha: head,
      head_branch: branch,
      status: "completed",
      conclusion: "failure",
    });
    expect(run.pull_requests.map((p: { head: { ref: string } }) => p.head.ref)).toEqual([branch]);
    expect((await call("GET", `${R}/actions/runs?head_sha=${head}&status=failure`)).body.total_count).toBe(1);
    expect((await call("GET", `${R}/actions/runs?branch=main`)).body.total_count).toBe(0);

    const one = await call("GET", `${R}/actions/runs/${runId}`);
    expectDocumented("/repos/{owner}/{repo}/actions/runs/{run_id}", "get", 200, one.body);
    expect(one.body.head_commit.id).toBe(head);
    // The run's check suite is GitHub Actions' suite of the commit.
    const suite = await call("GET", `${R}/check-suites/${one.body.check_suite_id}`);
    expect(suite.body).toMatchObject({
      head_sha: head,
      conclusion: "failure",
      app: { slug: "github-actions" },
    });
  });

  it("lists a run's jobs with their steps; a job's check run carries the failing step's annotations", async () => {
    const list = await call("GET", `${R}/actions/runs/${runId}/jobs`);
    expect(list.status).toBe(200);
    expectDocumented("/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", "get", 200, list.body);
    const byName = Object.fromEntries(list.body.jobs.map((j: { name: string }) => [j.name, j]));
    expect(byName.test).toMatchObject({ conclusion: "failure", head_sha: head, workflow_name: "CI" });
    expect(
      byName.test.steps.map((s: { name: string; conclusion: string }) => `${s.name}:${s.conclusion}`),
    ).toEqual(["Set up job:success", "Run npm test:failure"]);
    expect(byName.lint.conclusion).toBe("success");

    const job = await call("GET", `${R}/actions/jobs/${byName.test.id}`);
    expectDocumented("/repos/{owner}/{repo}/actions/jobs/{job_id}", "get", 200, job.body);
    const checkRunPath = new URL(job.body.check_run_url).pathname.replace(/^\/api\/v3/, "");
    const annotations = await call("GET", `${checkRunPath}/annotations`);
    expect(annotations.body.map((a: { path: string; message: string }) => `${a.path}: ${a.message}`)).toEqual(
      ["test/a.test.ts: AssertionError: expected 1 to be 2"],
    );
  });

  it("a job's log: a 302 to a download URL that needs no credential, plain text, and that Octokit follows", async () => {
    const test = jobs.find((j) => j.name === "test");
    const answer = await call("GET", `${R}/actions/jobs/${test?.id}/logs`);
    expect(answer.status).toBe(302);
    const location = answer.headers.get("location") ?? "";
    expect(location).not.toContain(token);
    const download = await fetch(location);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await download.text();
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(5);
    // Each line as the runner writes it: a timestamp, then the output.
    expect(lines[3]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z AssertionError: expected 1 to be 2$/);

    const octokit = await installationApi<LogsApi>(github);
    const followed = await octokit.rest.actions.downloadJobLogsForWorkflowRun({
      owner,
      repo,
      job_id: test?.id ?? 0,
    });
    expect(followed.status).toBe(200);
    expect(String(followed.data)).toBe(text);
    // A download URL with another signature is refused, as blob storage refuses it; so is one past
    // its minute.
    expect((await fetch(location.replace(/sig=\w+/, "sig=forged"))).status).toBe(403);
    for (const link of github.ci.logLinks.values()) link.expiresAt = Date.now() - 1;
    expect((await fetch(location)).status).toBe(403);
  });

  it("refuses logs as GitHub does: deleted logs 404, logs past retention 410, no actions: read 403", async () => {
    const { jobs: gone } = await github.ci.addWorkflowRun(owner, repo, {
      sha: head,
      name: "Nightly",
      path: ".github/workflows/nightly.yml",
      jobs: [
        { name: "deleted", conclusion: "failure", logs: "deleted" },
        { name: "old", conclusion: "failure", logs: "expired" },
      ],
    });
    expect((await call("GET", `${R}/actions/jobs/${gone[0]?.id}/logs`)).status).toBe(404);
    const expired = await call("GET", `${R}/actions/jobs/${gone[1]?.id}/logs`);
    expect(expired.status).toBe(410);
    expect(expired.body.message).toBe("Gone");

    await github.addRepo({ owner, name: "no-actions", files: { "a.txt": "a\n" }, installationId: 2 });
    github.setInstallationPermissions(2, { contents: "write", checks: "read" });
    const { jobs: theirs } = await github.ci.addWorkflowRun(owner, "no-actions", {
      branch: "main",
      jobs: [{ name: "test", conclusion: "failure", log: "boom" }],
    });
    const refused = await call(
      "GET",
      `/repos/${owner}/no-actions/actions/jobs/${theirs[0]?.id}/logs`,
      undefined,
      github.mintToken(2),
    );
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe("Resource not accessible by integration");
    expect(
      (await call("GET", `/repos/${owner}/no-actions/actions/runs`, undefined, github.mintToken(2))).status,
    ).toBe(403);
  });
});
