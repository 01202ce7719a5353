import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Probot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubServer, StandInOctokit, startGitHubServer } from "../../support/github-server.js";

const run = promisify(execFile);

/** Runs git with the token as an HTTP header only, as the worker does. */
function git(args: string[], token: string, cwd?: string) {
  const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  return run("git", ["-c", `http.extraheader=${header}`, ...args], {
    cwd,
    env: {
      ...process.env,
      GIT_TERMINAL_PROMPT: "0",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@e",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@e",
    },
  });
}

describe("GitHub and git stand-ins", () => {
  let github: GitHubServer;
  /** A fresh app client (Probot caches installation tokens, and one test expires them all). */
  const app = () =>
    new Probot({
      appId: github.appId,
      privateKey: github.keys.privateKeyPem,
      baseUrl: github.apiUrl,
      Octokit: StandInOctokit,
    });
  let work: string;

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner: "octo",
      name: "demo",
      files: { "README.md": "hello\n" },
      permissions: { alice: "write" },
    });
    github.addIssue("octo", "demo", { title: "Bug", body: "It breaks" });
    work = await mkdtemp(join(tmpdir(), "af-standin-test-"));
  });
  afterAll(async () => {
    await github.stop();
    await rm(work, { recursive: true, force: true });
  });

  it("mints installation tokens for a valid app JWT and refuses a JWT signed by another key", async () => {
    const octokit = await app().auth(1);
    const { data } = await octokit.rest.repos.get({ owner: "octo", repo: "demo" });
    expect(data.default_branch).toBe("main");
    // The app's own identity, as the worker reads it for commit authorship.
    const asApp = await app().auth();
    expect((await asApp.rest.apps.getAuthenticated()).data?.slug).toBe(github.appSlug);
    const bot = await octokit.rest.users.getByUsername({ username: github.bot.login });
    expect(bot.data).toMatchObject({ login: github.bot.login, id: github.bot.id, type: "Bot" });
    expect(
      github.state.requests.some((r) => r.path === "/app/installations/1/access_tokens" && r.status === 201),
    ).toBe(true);

    const other = await startGitHubServer({ appId: github.appId });
    try {
      const impostor = new Probot({
        appId: github.appId,
        privateKey: other.keys.privateKeyPem,
        baseUrl: github.apiUrl,
        Octokit: StandInOctokit,
      });
      const octokit = await impostor.auth(1);
      await expect(octokit.rest.repos.get({ owner: "octo", repo: "demo" })).rejects.toMatchObject({
        status: 401,
      });
    } finally {
      await other.stop();
    }
  });

  it("checks installation tokens on every request and refuses expired ones", async () => {
    const token = github.mintToken(1);
    const headers = { authorization: `token ${token}` };
    expect((await fetch(`${github.apiUrl}/repos/octo/demo/issues/1`, { headers })).status).toBe(200);
    expect((await fetch(`${github.apiUrl}/repos/octo/demo/issues/1`)).status).toBe(401);
    expect(
      (
        await fetch(`${github.apiUrl}/repos/octo/demo/issues/1`, {
          headers: { authorization: "token ghs_made_up" },
        })
      ).status,
    ).toBe(401);
    // Another installation's token cannot see the repository.
    const foreign = { authorization: `token ${github.mintToken(2)}` };
    expect((await fetch(`${github.apiUrl}/repos/octo/demo/issues/1`, { headers: foreign })).status).toBe(404);
    github.expireAllTokens();
    const expired = await fetch(`${github.apiUrl}/repos/octo/demo/issues/1`, { headers });
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { message: string }).message).toMatch(/expired/);
  });

  it("clones and pushes over HTTP with a token header; refuses bad tokens and the protected default branch", async () => {
    const token = github.mintToken(1);
    const dir = join(work, "clone");
    await git(["clone", "--quiet", "--depth", "1", `${github.url}/octo/demo.git`, dir], token);
    await writeFile(join(dir, "fix.txt"), "fixed\n");
    await git(["add", "fix.txt"], token, dir);
    await git(["commit", "--quiet", "-m", "Fix"], token, dir);
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/agent-fix/issue-1"], token, dir);
    const branches = await github.branches("octo", "demo");
    expect(Object.keys(branches).sort()).toEqual(["agent-fix/issue-1", "main"]);
    expect(github.pushes).toHaveLength(1);
    expect(github.pushes[0]?.after["refs/heads/agent-fix/issue-1"]).toBe(branches["agent-fix/issue-1"]);

    await expect(git(["push", "--quiet", "origin", "HEAD:refs/heads/main"], token, dir)).rejects.toThrow(
      /protected branch/,
    );
    await expect(
      git(["push", "--quiet", "origin", "HEAD:refs/heads/other"], "ghs_wrong", dir),
    ).rejects.toThrow();
    github.expireAllTokens();
    await expect(git(["ls-remote", `${github.url}/octo/demo.git`], token)).rejects.toThrow();
    expect(github.pushes).toHaveLength(1);
  });

  it("records comments edited in place, reactions, pull requests (never two for one branch) and review requests", async () => {
    const octokit = await app().auth(1);
    const repo = { owner: "octo", repo: "demo" };
    const { data: comment } = await octokit.rest.issues.createComment({
      ...repo,
      issue_number: 1,
      body: "queued",
    });
    await octokit.rest.issues.updateComment({ ...repo, comment_id: comment.id, body: "done" });
    await octokit.rest.reactions.createForIssue({ ...repo, issue_number: 1, content: "eyes" });
    const stored = github.state.comments.find((c) => c.id === comment.id);
    expect(stored?.history).toEqual(["queued", "done"]);
    expect(stored?.user.login).toBe(github.bot.login);
    expect(github.state.reactions.map((r) => r.content)).toEqual(["eyes"]);

    const { data: pull } = await octokit.rest.pulls.create({
      ...repo,
      title: "Fix",
      head: "agent-fix/issue-1",
      base: "main",
      draft: true,
    });
    expect(pull.draft).toBe(true);
    await expect(
      octokit.rest.pulls.create({ ...repo, title: "Again", head: "agent-fix/issue-1", base: "main" }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      octokit.rest.pulls.create({ ...repo, title: "Nope", head: "no-such-branch", base: "main" }),
    ).rejects.toMatchObject({ status: 422 });
    const { data: open } = await octokit.rest.pulls.list({
      ...repo,
      head: "octo:agent-fix/issue-1",
      state: "open",
    });
    expect(open.map((p) => p.number)).toEqual([pull.number]);

    await octokit.rest.pulls.requestReviewers({ ...repo, pull_number: pull.number, reviewers: ["alice"] });
    await expect(
      octokit.rest.pulls.requestReviewers({ ...repo, pull_number: pull.number, reviewers: ["mallory"] }),
    ).rejects.toMatchObject({ status: 422 });
    expect(github.state.pull("octo", "demo", pull.number)?.reviewRequests).toEqual(["alice"]);

    const { data: perm } = await octokit.rest.repos.getCollaboratorPermissionLevel({
      ...repo,
      username: "alice",
    });
    expect(perm.permission).toBe("write");
    const { data: none } = await octokit.rest.repos.getCollaboratorPermissionLevel({
      ...repo,
      username: "mallory",
    });
    expect(none.permission).toBe("none");
  });

  it("rejects comments over GitHub's 65,536-character limit", async () => {
    const octokit = await app().auth(1);
    await expect(
      octokit.rest.issues.createComment({
        owner: "octo",
        repo: "demo",
        issue_number: 1,
        body: "x".repeat(65_537),
      }),
    ).rejects.toMatchObject({ status: 422 });
  });
});
