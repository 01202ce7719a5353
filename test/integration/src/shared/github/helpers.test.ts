import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Probot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createStatusComment,
  type GitHubApi,
  hasWriteAccess,
  updateStatusComment,
} from "../../../../../src/shared/github/index.js";
import { openOrUpdatePullRequest, requestReview } from "../../../../../worker/github/pull-request.js";
import { type GitHubServer, StandInOctokit, startGitHubServer } from "../../../../support/github-server.js";

const run = promisify(execFile);

describe("GitHub helpers against the stand-in", () => {
  let github: GitHubServer;
  let api: GitHubApi;
  const repo = { owner: "octo", repo: "demo" };

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner: "octo",
      name: "demo",
      files: { "a.txt": "a\n" },
      permissions: { alice: "write", tess: "triage", mara: "maintain" },
    });
    github.addIssue("octo", "demo", { title: "Bug" });
    // Push the fix branch as the worker would.
    const dir = await mkdtemp(join(tmpdir(), "af-helpers-"));
    const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${github.mintToken()}`).toString("base64")}`;
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: "a",
      GIT_AUTHOR_EMAIL: "a@b",
      GIT_COMMITTER_NAME: "a",
      GIT_COMMITTER_EMAIL: "a@b",
    };
    await run(
      "git",
      ["-c", `http.extraheader=${header}`, "clone", "-q", `${github.url}/octo/demo.git`, dir],
      { env },
    );
    await run("git", ["commit", "-q", "--allow-empty", "-m", "fix"], { cwd: dir, env });
    await run("git", ["-c", `http.extraheader=${header}`, "push", "-q", "origin", "HEAD:agent-fix/issue-1"], {
      cwd: dir,
      env,
    });
    await rm(dir, { recursive: true, force: true });
    const probot = new Probot({
      appId: github.appId,
      privateKey: github.keys.privateKeyPem,
      baseUrl: github.apiUrl,
      Octokit: StandInOctokit,
    });
    api = await probot.auth(1);
  });
  afterAll(() => github.stop());

  it("opens one draft pull request per branch and updates it on every later call", async () => {
    const input = {
      ...repo,
      branch: "agent-fix/issue-1",
      base: "main",
      title: "Fix the bug",
      body: "first\n\nFixes #1",
    };
    const first = await openOrUpdatePullRequest(api, input);
    expect(first.created).toBe(true);
    const second = await openOrUpdatePullRequest(api, { ...input, body: "second\n\nFixes #1" });
    expect(second).toMatchObject({ number: first.number, created: false });
    const pulls = github.state.pulls.filter((p) => p.head === "agent-fix/issue-1");
    expect(pulls).toHaveLength(1);
    expect(pulls[0]).toMatchObject({ draft: true, body: "second\n\nFixes #1", base: "main" });
    expect(pulls[0]?.user.login).toBe(github.bot.login);

    expect(await requestReview(api, repo, first.number, "alice")).toBe(true);
    expect(await requestReview(api, repo, first.number, "stranger")).toBe(false);
    expect(github.state.pull("octo", "demo", first.number)?.reviewRequests).toEqual(["alice"]);
  });

  it("edits the status comment in place", async () => {
    const context = { requestedBy: "alice" };
    const issue = { ...repo, issueNumber: 1 };
    const id = await createStatusComment(api, issue, { kind: "progress", phase: "queued" }, context);
    await updateStatusComment(api, repo, id, { kind: "progress", phase: "agent", step: 1 }, context);
    await updateStatusComment(api, repo, id, { kind: "cancelled", by: "bob" }, context);
    const comment = github.state.comments.find((c) => c.id === id);
    expect(comment?.history).toHaveLength(3);
    expect(comment?.body).toContain("cancelled by @bob");
    expect(github.state.commentsOn("octo", "demo", 1)).toHaveLength(1);
  });

  it("grants commands to write, maintain and admin only", async () => {
    expect(await hasWriteAccess(api, repo, "alice")).toBe(true);
    expect(await hasWriteAccess(api, repo, "mara")).toBe(true);
    expect(await hasWriteAccess(api, repo, "tess")).toBe(false);
    expect(await hasWriteAccess(api, repo, "stranger")).toBe(false);
  });
});
