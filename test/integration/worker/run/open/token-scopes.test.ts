import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Probot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  probotInstallationAuth,
  TOKEN_PERMISSIONS,
} from "../../../../../worker/run/open/installation-auth.js";
import { type GitHubServer, StandInOctokit, startGitHubServer } from "../../../../support/github-server.js";

const run = promisify(execFile);

function git(args: string[], token: string, cwd?: string) {
  const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  return run("git", ["-c", `http.extraheader=${header}`, ...args], {
    cwd,
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e" },
  });
}

// The stand-in scopes installation tokens as GitHub documents it, so the worker's scoping is tested.
describe("installation tokens scoped to repositories and permissions, and revoked", () => {
  let github: GitHubServer;
  let work: string;
  let demoId = 0;
  let otherId = 0;
  const jwtClient = () =>
    new Probot({
      appId: github.appId,
      privateKey: github.keys.privateKeyPem,
      baseUrl: github.apiUrl,
      Octokit: StandInOctokit,
    }).auth();
  const mint = async (body: Record<string, unknown>) => {
    const app = await jwtClient();
    return app.request("POST /app/installations/{installation_id}/access_tokens", {
      installation_id: 1,
      ...body,
    });
  };
  const call = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${github.apiUrl}${path}`, {
      method,
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  beforeAll(async () => {
    github = await startGitHubServer();
    demoId = (await github.addRepo({ owner: "octo", name: "demo", files: { "a.txt": "a\n" } })).id;
    otherId = (await github.addRepo({ owner: "octo", name: "other", files: { "b.txt": "b\n" } })).id;
    github.addIssue("octo", "demo", { title: "Bug" });
    github.addIssue("octo", "other", { title: "Other bug" });
    work = await mkdtemp(join(tmpdir(), "af-scopes-"));
  });
  afterAll(async () => {
    await github.stop();
    await rm(work, { recursive: true, force: true });
  });

  it("a token for one repository sees only it: the others are 404 Not Found, over REST and git", async () => {
    const { status, data } = await mint({ repository_ids: [demoId], permissions: TOKEN_PERMISSIONS.api });
    expect(status).toBe(201);
    expect(data).toMatchObject({
      repository_selection: "selected",
      permissions: { issues: "write", pull_requests: "write", metadata: "read" },
    });
    expect(data.repositories?.map((r) => r.full_name)).toEqual(["octo/demo"]);
    expect((await call(data.token, "GET", "/repos/octo/demo/issues/1")).status).toBe(200);
    const hidden = await call(data.token, "GET", "/repos/octo/other/issues/1");
    expect(hidden.status).toBe(404);
    expect(((await hidden.json()) as { message: string }).message).toBe("Not Found");
    const clone = await mint({ repository_ids: [demoId], permissions: TOKEN_PERMISSIONS.clone });
    await git(["ls-remote", `${github.url}/octo/demo.git`], clone.data.token);
    await expect(git(["ls-remote", `${github.url}/octo/other.git`], clone.data.token)).rejects.toThrow(
      /404|not found/i,
    );
  });

  it("a permission the token lacks is 403 Resource not accessible by integration", async () => {
    const { data } = await mint({ repository_ids: [demoId], permissions: TOKEN_PERMISSIONS.clone });
    const comment = await call(data.token, "POST", "/repos/octo/demo/issues/1/comments", { body: "hi" });
    expect(comment.status).toBe(403);
    expect(((await comment.json()) as { message: string }).message).toBe(
      "Resource not accessible by integration",
    );
    // Reading the repository needs only metadata, which every token has.
    expect((await call(data.token, "GET", "/repos/octo/demo")).status).toBe(200);
    // A clone token may fetch but not push; a push token may push.
    const dir = join(work, "clone");
    await git(["clone", "--quiet", `${github.url}/octo/demo.git`, dir], data.token);
    await writeFile(join(dir, "c.txt"), "c\n");
    await run("git", ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "c", "--allow-empty"], {
      cwd: dir,
    });
    await expect(
      git(["push", "-q", "origin", "HEAD:refs/heads/agent-fix/issue-1"], data.token, dir),
    ).rejects.toThrow(/403/);
    const push = await mint({ repository_ids: [demoId], permissions: TOKEN_PERMISSIONS.push });
    await git(["push", "-q", "origin", "HEAD:refs/heads/agent-fix/issue-1"], push.data.token, dir);
    expect(Object.keys(await github.branches("octo", "demo"))).toContain("agent-fix/issue-1");
  });

  it("the check run token writes check runs and nothing else", async () => {
    const { data } = await mint({ repository_ids: [demoId], permissions: TOKEN_PERMISSIONS.checks });
    expect(data.permissions).toEqual({ checks: "write", metadata: "read" });
    const head = (await github.branches("octo", "demo")).main;
    const created = await call(data.token, "POST", "/repos/octo/demo/check-runs", {
      name: "agent-fix / tests",
      head_sha: head,
    });
    expect(created.status).toBe(201);
    const comment = await call(data.token, "POST", "/repos/octo/demo/issues/1/comments", { body: "hi" });
    expect(comment.status).toBe(403);
    expect((await call(data.token, "GET", "/repos/octo/demo/contents/a.txt")).status).toBe(403);
  });

  it("refuses to mint for repositories or permissions the installation lacks (422)", async () => {
    await expect(mint({ repository_ids: [otherId + 1000] })).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining("not accessible to the parent installation"),
    });
    await expect(mint({ permissions: { administration: "write" } })).rejects.toMatchObject({ status: 422 });
    // Without scoping, a token has every repository and permission of the installation.
    const { data } = await mint({});
    expect(data.repository_selection).toBe("all");
    expect((await call(data.token, "GET", "/repos/octo/other/issues/1")).status).toBe(200);
  });

  it("an installation is granted what app.yml asks for until a test sets it; each of its tokens is held to that", async () => {
    await github.addRepo({ owner: "octo", name: "third", files: { "c.txt": "c\n" }, installationId: 3 });
    const manifest = parse(await readFile(new URL("../../../../../app.yml", import.meta.url), "utf8")) as {
      default_permissions: Record<string, string>;
    };
    const asked = await mint({ installation_id: 3 });
    expect(asked.data.permissions).toEqual({ metadata: "read", ...manifest.default_permissions });

    github.setInstallationPermissions(3, { contents: "read" });
    const narrowed = await mint({ installation_id: 3 });
    expect(narrowed.data.permissions).toEqual({ metadata: "read", contents: "read" });
    await expect(mint({ installation_id: 3, permissions: { contents: "write" } })).rejects.toMatchObject({
      status: 422,
    });
    // A token minted without scoping has the installation's permissions, over REST and git.
    const token = github.mintToken(3);
    expect((await call(token, "GET", "/repos/octo/third/contents/c.txt")).status).toBe(200);
    const refused = await call(token, "POST", "/repos/octo/third/pulls", {
      title: "t",
      head: "main",
      base: "main",
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toBe(
      "Resource not accessible by integration",
    );
    const dir = join(work, "third");
    await git(["clone", "--quiet", `${github.url}/octo/third.git`, dir], token);
    await writeFile(join(dir, "c.txt"), "changed\n");
    await git(["commit", "-qam", "change"], token, dir);
    await expect(
      git(["push", "-q", "origin", "HEAD:refs/heads/agent-fix/issue-9"], token, dir),
    ).rejects.toThrow();
    expect(Object.keys(await github.branches("octo", "third"))).toEqual(["main"]);
    const pushes = github.state.requests.filter((r) => r.method === "GIT-PUSH" && r.token === token);
    expect(pushes.map((r) => r.status)).toContain(403);
  });

  it("a run's credentials: one repository, each step's permissions, renewed before expiry, all revoked", async () => {
    const probot = new Probot({
      appId: github.appId,
      privateKey: github.keys.privateKeyPem,
      baseUrl: github.apiUrl,
      Octokit: StandInOctokit,
    });
    const credentials = probotInstallationAuth(probot).forRun(1, demoId);
    const from = github.state.requests.length;
    const octokit = await credentials.octokit();
    await octokit.rest.issues.createComment({ owner: "octo", repo: "demo", issue_number: 1, body: "hi" });
    await expect(
      octokit.rest.issues.get({ owner: "octo", repo: "other", issue_number: 1 }),
    ).rejects.toMatchObject({
      status: 404,
    });
    const clone = await credentials.token("clone");
    const push = await credentials.token("push");
    expect(github.state.tokens.get(clone)?.scope).toEqual({
      repositoryIds: [demoId],
      permissions: { metadata: "read", contents: "read" },
    });
    expect(github.state.tokens.get(push)?.scope?.permissions).toEqual({
      metadata: "read",
      contents: "write",
    });
    await credentials.revoke();
    const used = github.state.requests.slice(from).filter((r) => r.path.startsWith("/repos/"));
    for (const token of [...used.map((r) => r.token), clone, push]) {
      expect(github.state.tokens.get(token ?? "")?.revokedAt, token).toBeDefined();
    }
    // A token that expires within the renewal margin is replaced before the next request.
    github.tokenTtlMs = 60_000;
    const shortLived = probotInstallationAuth(probot).forRun(1, demoId);
    const renewing = await shortLived.octokit();
    const before = github.state.requests.length;
    await renewing.rest.issues.get({ owner: "octo", repo: "demo", issue_number: 1 });
    await renewing.rest.issues.get({ owner: "octo", repo: "demo", issue_number: 1 });
    github.tokenTtlMs = 60 * 60 * 1000;
    const renewed = github.state.requests.slice(before).filter((r) => r.path.startsWith("/repos/"));
    expect(renewed.map((r) => r.status)).toEqual([200, 200]);
    expect(new Set(renewed.map((r) => r.token)).size).toBe(2);
    await shortLived.revoke();
    for (const request of renewed)
      expect(github.state.tokens.get(request.token ?? "")?.revokedAt).toBeDefined();
    // A repository the installation cannot reach is a clear, non-retryable error at the start.
    await expect(probotInstallationAuth(probot).forRun(1, 999_999).octokit()).rejects.toMatchObject({
      code: "installation_auth_failed",
      retryable: false,
    });
  });

  it("DELETE /installation/token answers 204 and the token stops working", async () => {
    const { data } = await mint({ repository_ids: [demoId], permissions: TOKEN_PERMISSIONS.api });
    expect((await call(data.token, "DELETE", "/installation/token")).status).toBe(204);
    const after = await call(data.token, "GET", "/repos/octo/demo/issues/1");
    expect(after.status).toBe(401);
    expect(((await after.json()) as { message: string }).message).toMatch(/Bad credentials/);
    await expect(git(["ls-remote", `${github.url}/octo/demo.git`], data.token)).rejects.toThrow();
    expect(github.state.tokens.get(data.token)?.revokedAt).toBeDefined();
  });
});
