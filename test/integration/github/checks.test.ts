import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GITHUB_ACTIONS, type GitHubServer, startGitHubServer } from "../../support/github-server.js";
import { documentedStatuses, expectDocumented } from "../../support/openapi.js";
import { type RestCall, restCaller } from "../../support/rest-call.js";

const owner = "octo";
const repo = "ci";
const branch = "agent-fix/issue-1";
/** All these endpoints need; set explicitly so that app.yml's changes do not move these tests. */
const GRANTED = {
  contents: "write",
  issues: "write",
  pull_requests: "write",
  checks: "write",
  statuses: "write",
  actions: "read",
} as const;

const annotation = (line: number) => ({
  path: "src/a.ts",
  start_line: line,
  end_line: line,
  annotation_level: "failure" as const,
  message: `line ${line} is wrong`,
});

// Check runs, suites and commit statuses, as the app will create and read them, checked against
// GitHub's OpenAPI description of each answer.
describe("the stand-in's checks and commit statuses", () => {
  let github: GitHubServer;
  let token: string;
  let head: string;
  let pullNumber: number;
  let call: RestCall;
  const R = `/repos/${owner}/${repo}`;

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({ owner, name: repo, files: { "src/a.ts": "export const a = 1;\n" } });
    await github.addRepo({ owner, name: "narrow", files: { "a.txt": "a\n" }, installationId: 2 });
    github.setInstallationPermissions(1, GRANTED);
    head = await github.commitAs(
      github.bot.login,
      { owner, repo, branch },
      { "src/a.ts": "export const a = 2;\n" },
    );
    token = github.mintToken(1);
    call = restCaller(github, token);
    const pull = await call("POST", `${R}/pulls`, {
      title: "Fix a",
      head: branch,
      base: "main",
      draft: true,
    });
    pullNumber = pull.body.number;
  });
  afterAll(() => github.stop());

  it("creates the app's check run, adds annotations in batches of 50, completes it, and reads it back", async () => {
    const created = await call("POST", `${R}/check-runs`, {
      name: "agent-fix / tests",
      head_sha: head,
      status: "in_progress",
      output: {
        title: "Running",
        summary: "baseline",
        annotations: Array.from({ length: 50 }, (_, i) => annotation(i + 1)),
      },
    });
    expect(created.status).toBe(201);
    expectDocumented("/repos/{owner}/{repo}/check-runs", "post", 201, created.body);
    expect(created.body).toMatchObject({ head_sha: head, status: "in_progress", conclusion: null });
    expect(created.body.app.id).toBe(github.appId);
    expect(created.body.pull_requests.map((p: { number: number }) => p.number)).toEqual([pullNumber]);

    const id = created.body.id;
    const updated = await call("PATCH", `${R}/check-runs/${id}`, {
      conclusion: "success",
      output: {
        title: "Passed",
        summary: "fail before, pass after",
        annotations: [annotation(51), annotation(52)],
      },
    });
    expect(updated.status).toBe(200);
    expectDocumented("/repos/{owner}/{repo}/check-runs/{check_run_id}", "patch", 200, updated.body);
    expect(updated.body).toMatchObject({ status: "completed", conclusion: "success" });
    expect(updated.body.output).toMatchObject({ title: "Passed", annotations_count: 52 });
    expect(updated.body.completed_at).not.toBeNull();

    const got = await call("GET", `${R}/check-runs/${id}`);
    expectDocumented("/repos/{owner}/{repo}/check-runs/{check_run_id}", "get", 200, got.body);
    expect(got.body.output.summary).toBe("fail before, pass after");

    const first = await call("GET", `${R}/check-runs/${id}/annotations`);
    expectDocumented("/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations", "get", 200, first.body);
    expect(first.body).toHaveLength(30);
    expect(first.headers.get("link")).toContain('rel="next"');
    const all = await call("GET", `${R}/check-runs/${id}/annotations?per_page=100`);
    expect(all.body.map((a: { start_line: number }) => a.start_line)).toEqual(
      Array.from({ length: 52 }, (_, i) => i + 1),
    );
    expect(all.body[0]).toMatchObject({
      path: "src/a.ts",
      annotation_level: "failure",
      message: "line 1 is wrong",
    });
  });

  it("lists a ref's check runs and suites, the repository's CI beside the app's: latest by default, by name and app", async () => {
    const lint = { branch, name: "lint", conclusion: "failure" as const, annotations: [annotation(1)] };
    await github.ci.addCheckRun(owner, repo, lint);
    await github.ci.addCheckRun(owner, repo, { ...lint, conclusion: "success", annotations: [] });
    await github.ci.addCheckRun(owner, repo, { branch, name: "unit", conclusion: "failure" });

    // A branch name resolves to its head on the git server, as a SHA does.
    const latest = await call("GET", `${R}/commits/${encodeURIComponent(branch)}/check-runs`);
    expect(latest.status).toBe(200);
    expectDocumented("/repos/{owner}/{repo}/commits/{ref}/check-runs", "get", 200, latest.body);
    const names = (list: { check_runs: { name: string; conclusion: string }[] }) =>
      list.check_runs.map((r) => `${r.name}:${r.conclusion}`).sort();
    expect(names(latest.body)).toEqual(["agent-fix / tests:success", "lint:success", "unit:failure"]);
    expect(latest.body.total_count).toBe(3);
    const all = await call("GET", `${R}/commits/${head}/check-runs?filter=all`);
    expect(all.body.total_count).toBe(4);
    const byName = await call("GET", `${R}/commits/${head}/check-runs?check_name=lint&filter=all`);
    expect(names(byName.body)).toEqual(["lint:failure", "lint:success"]);
    const byApp = await call("GET", `${R}/commits/${head}/check-runs?app_id=${GITHUB_ACTIONS.id}`);
    expect(names(byApp.body)).toEqual(["lint:success", "unit:failure"]);

    const suites = await call("GET", `${R}/commits/${head}/check-suites`);
    expectDocumented("/repos/{owner}/{repo}/commits/{ref}/check-suites", "get", 200, suites.body);
    const byAppSlug = Object.fromEntries(
      suites.body.check_suites.map((s: { app: { slug: string }; conclusion: string }) => [
        s.app.slug,
        s.conclusion,
      ]),
    );
    // The Actions suite failed: its latest unit run failed, whatever lint's rerun did.
    expect(byAppSlug).toEqual({ [github.appSlug]: "success", "github-actions": "failure" });
    // The app's suite names the branch whose head the commit is, as GitHub's does.
    expect(suites.body.check_suites.map((s: { head_branch: string }) => s.head_branch)).toEqual([
      branch,
      branch,
    ]);
    const actions = suites.body.check_suites.find(
      (s: { app: { id: number } }) => s.app.id === GITHUB_ACTIONS.id,
    );
    expect(actions.head_branch).toBe(branch);
    expect(actions.pull_requests.map((p: { number: number }) => p.number)).toEqual([pullNumber]);
    const one = await call("GET", `${R}/check-suites/${actions.id}`);
    expectDocumented("/repos/{owner}/{repo}/check-suites/{check_suite_id}", "get", 200, one.body);
    expect(one.body).toMatchObject({
      status: "completed",
      conclusion: "failure",
      latest_check_runs_count: 3,
    });
  });

  it("refuses check runs as GitHub does: over 50 annotations, an unknown commit, completed without a conclusion, another app's run", async () => {
    const many = Array.from({ length: 51 }, (_, i) => annotation(i + 1));
    const over = await call("POST", `${R}/check-runs`, {
      name: "x",
      head_sha: head,
      output: { title: "t", summary: "s", annotations: many },
    });
    expect(over.status).toBe(422);
    expect(over.body.message).toBe(
      "Invalid request.\n\nNo more than 50 items are allowed; 51 were supplied.",
    );
    const unknown = await call("POST", `${R}/check-runs`, { name: "x", head_sha: "0".repeat(40) });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toBe(`No commit found for SHA: ${"0".repeat(40)}`);
    const noConclusion = await call("POST", `${R}/check-runs`, {
      name: "x",
      head_sha: head,
      status: "completed",
    });
    expect(noConclusion.status).toBe(422);

    const theirs = await github.ci.addCheckRun(owner, repo, {
      sha: head,
      name: "build",
      status: "in_progress",
    });
    const overwrite = await call("PATCH", `${R}/check-runs/${theirs.id}`, { conclusion: "success" });
    expect(overwrite.status).toBe(403);
    expect(overwrite.body.message).toBe(
      `Invalid app_id \`${github.appId}\` - check run can only be modified by the GitHub App that created it.`,
    );
    expect(theirs.status).toBe("in_progress");
    // A refused batch adds nothing: the app's run keeps its 52 annotations.
    const mine = github.ci.checkRuns.find((r) => r.name === "agent-fix / tests");
    const refused = await call("PATCH", `${R}/check-runs/${mine?.id}`, {
      output: { title: "t", summary: "s", annotations: many },
    });
    expect(refused.status).toBe(422);
    expect(mine?.annotations).toHaveLength(52);
  });

  it("an installation without checks: write may read check runs and not create them: 403 Resource not accessible by integration", async () => {
    github.setInstallationPermissions(2, { contents: "write", checks: "read" });
    const narrow = github.mintToken(2);
    const sha = (await github.branches(owner, "narrow")).main;
    const refused = await call(
      "POST",
      `/repos/${owner}/narrow/check-runs`,
      { name: "x", head_sha: sha },
      narrow,
    );
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe("Resource not accessible by integration");
    expect(github.ci.checkRuns.filter((r) => r.repo === "narrow")).toEqual([]);
    const read = await call("GET", `/repos/${owner}/narrow/commits/main/check-runs`, undefined, narrow);
    expect(read.status).toBe(200);
    // Nor may it read commit statuses without statuses: read.
    const statuses = await call("GET", `/repos/${owner}/narrow/commits/main/status`, undefined, narrow);
    expect(statuses.status).toBe(403);
  });

  it("commit statuses: created on a commit, listed newest first, combined as the latest of each context", async () => {
    const created = await call("POST", `${R}/statuses/${head}`, {
      state: "pending",
      context: "ci/build",
      target_url: "https://ci.example/1",
      description: "building",
    });
    expect(created.status).toBe(201);
    expectDocumented("/repos/{owner}/{repo}/statuses/{sha}", "post", 201, created.body);
    expect(created.headers.get("location")).toBe(created.body.url);
    expect(created.body.creator.login).toBe(github.bot.login);
    await github.ci.addStatus(
      owner,
      repo,
      { branch },
      { state: "failure", context: "ci/build", description: "2 tests failed" },
    );
    await github.ci.addStatus(owner, repo, { sha: head }, { state: "success", context: "ci/lint" });

    const combined = await call("GET", `${R}/commits/${encodeURIComponent(branch)}/status`);
    expect(combined.status).toBe(200);
    expectDocumented("/repos/{owner}/{repo}/commits/{ref}/status", "get", 200, combined.body);
    expect(combined.body).toMatchObject({ state: "failure", sha: head, total_count: 2 });
    expect(
      combined.body.statuses.map((s: { context: string; state: string }) => `${s.context}:${s.state}`),
    ).toEqual(["ci/lint:success", "ci/build:failure"]);
    const list = await call("GET", `${R}/commits/${head}/statuses`);
    expectDocumented("/repos/{owner}/{repo}/commits/{ref}/statuses", "get", 200, list.body);
    expect(list.body.map((s: { state: string }) => s.state)).toEqual(["success", "failure", "pending"]);

    // A commit without statuses is pending, with none.
    const main = await call("GET", `${R}/commits/main/status`);
    expect(main.body).toMatchObject({ state: "pending", total_count: 0, statuses: [] });
    const invalid = await call("POST", `${R}/statuses/${head}`, { state: "broken" });
    expect(invalid.status).toBe(422);
    expect(documentedStatuses("/repos/{owner}/{repo}/commits/{ref}/status", "get")).toContain(404);
    expect((await call("GET", `${R}/commits/no-such-ref/status`)).status).toBe(404);
  });
});
