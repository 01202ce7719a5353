import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubServer, startGitHubServer } from "../../support/github-server.js";
import { documentedResponse, documentedStatuses, expectDocumented } from "../../support/openapi.js";
import { type RestCall, restCaller } from "../../support/rest-call.js";

const run = promisify(execFile);
const owner = "octo";
const repo = "keep-up";

// Keeping the app's branch up with its base, and telling a person's commits from the app's: compare,
// merges and mergeability on the stand-in, computed by git and checked against GitHub's OpenAPI.
describe("the stand-in's compare, merges and pull request mergeability", () => {
  let github: GitHubServer;
  let token: string;
  let forkPoint: string;
  let call: RestCall;
  const R = `/repos/${owner}/${repo}`;
  const pullState = async (number: number) => {
    const { body } = await call("GET", `${R}/pulls/${number}`);
    return { mergeable: body.mergeable, mergeable_state: body.mergeable_state };
  };

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner,
      name: repo,
      files: {
        "src/a.ts": "export const a = 1;\n",
        "src/b.ts": "export const b = 1;\n",
        ".github/CODEOWNERS": "src/ @octo/core\n*.md @docs-team\n",
      },
    });
    forkPoint = (await github.branches(owner, repo)).main ?? "";
    token = github.mintToken(1);
    call = restCaller(github, token);
  });
  afterAll(() => github.stop());

  it("compares a branch with its base that moved: ahead_by, behind_by, the commits with their authors, the merge base", async () => {
    const branch = "agent-fix/issue-1";
    const fix = await github.commitAs(
      github.bot.login,
      { owner, repo, branch },
      { "src/a.ts": "export const a = 2;\n" },
      "Fix a",
    );
    const person = await github.commitAs(
      "bob",
      { owner, repo, branch },
      { "src/a.ts": "export const a = 2; // bob\n" },
      "Tweak",
    );
    const moved = await github.commitAs(
      "alice",
      { owner, repo, branch: "main" },
      { "README.md": "hello\n" },
      "Docs",
    );

    const answer = await call("GET", `${R}/compare/main...${encodeURIComponent(branch)}`);
    expect(answer.status).toBe(200);
    expectDocumented("/repos/{owner}/{repo}/compare/{basehead}", "get", 200, answer.body);
    expect(answer.body).toMatchObject({ status: "diverged", ahead_by: 2, behind_by: 1, total_commits: 2 });
    expect(answer.body.base_commit.sha).toBe(moved);
    expect(answer.body.merge_base_commit.sha).toBe(forkPoint);
    // Oldest first, each with the GitHub user its noreply address names: the app's commit and bob's.
    expect(
      answer.body.commits.map((c: { sha: string; author: { login: string; type: string } }) => [
        c.sha,
        c.author.login,
        c.author.type,
      ]),
    ).toEqual([
      [fix, github.bot.login, "Bot"],
      [person, "bob", "User"],
    ]);
    expect(
      answer.body.files.map((f: { filename: string; status: string }) => `${f.status} ${f.filename}`),
    ).toEqual(["modified src/a.ts"]);

    const behind = await call("GET", `${R}/compare/${encodeURIComponent(branch)}...main`);
    expect(behind.body).toMatchObject({ status: "diverged", ahead_by: 1, behind_by: 2 });
    const same = await call("GET", `${R}/compare/main...main`);
    expect(same.body).toMatchObject({ status: "identical", ahead_by: 0, behind_by: 0, commits: [] });
    expect(documentedStatuses("/repos/{owner}/{repo}/compare/{basehead}", "get")).toContain(404);
    expect((await call("GET", `${R}/compare/main...no-such-branch`)).status).toBe(404);
  });

  it("merges the base into a branch: 201 with the merge commit, then 204 with nothing to merge", async () => {
    const branch = "agent-fix/issue-1";
    const before = await github.branches(owner, repo);
    const merged = await call("POST", `${R}/merges`, { base: branch, head: "main" });
    expect(merged.status).toBe(201);
    expectDocumented("/repos/{owner}/{repo}/merges", "post", 201, merged.body);
    expect(merged.body.parents.map((p: { sha: string }) => p.sha)).toEqual([before[branch], before.main]);
    expect(merged.body.commit.message).toBe(`Merge main into ${branch}`);
    // The branch on the git server is the merge now; what the app fetches next is it.
    expect((await github.branches(owner, repo))[branch]).toBe(merged.body.sha);
    const { stdout } = await run("git", [
      "--git-dir",
      github.repoDir(owner, repo),
      "show",
      `${merged.body.sha}:README.md`,
    ]);
    expect(stdout).toBe("hello\n");

    const again = await call("POST", `${R}/merges`, { base: branch, head: "main" });
    expect(again.status).toBe(204);
    expect((await github.branches(owner, repo))[branch]).toBe(merged.body.sha);
  });

  it("refuses a merge as GitHub does: 409 on a conflict (the branch unchanged), 404 for a missing base or head", async () => {
    const branch = "agent-fix/issue-2";
    await github.commitAs(github.bot.login, { owner, repo, branch }, { "src/b.ts": "export const b = 2;\n" });
    await github.commitAs("alice", { owner, repo, branch: "main" }, { "src/b.ts": "export const b = 3;\n" });
    const before = (await github.branches(owner, repo))[branch];
    const conflict = await call("POST", `${R}/merges`, { base: branch, head: "main" });
    expect(conflict.status).toBe(409);
    expect(conflict.body.message).toBe("Merge conflict");
    expect((await github.branches(owner, repo))[branch]).toBe(before);
    const statuses = documentedStatuses("/repos/{owner}/{repo}/merges", "post");
    expect(statuses).toEqual(expect.arrayContaining([201, 204, 404, 409]));
    const noBase = await call("POST", `${R}/merges`, { base: "gone", head: "main" });
    expect(noBase).toMatchObject({ status: 404, body: { message: "Base does not exist" } });
    const noHead = await call("POST", `${R}/merges`, { base: branch, head: "gone" });
    expect(noHead).toMatchObject({ status: 404, body: { message: "Head does not exist" } });
  });

  it("a pull request's mergeability: unknown while GitHub computes it, dirty on a conflict, unstable with a failing check, clean", async () => {
    const fields = documentedResponse("/repos/{owner}/{repo}/pulls/{pull_number}", "get", 200);
    const conflicting = await call("POST", `${R}/pulls`, {
      title: "b",
      head: "agent-fix/issue-2",
      base: "main",
    });
    const clean = await call("POST", `${R}/pulls`, { title: "a", head: "agent-fix/issue-1", base: "main" });
    const pull = github.state.pull(owner, repo, conflicting.body.number);
    if (pull) pull.mergeabilityPending = 1;
    expect(await pullState(conflicting.body.number)).toEqual({ mergeable: null, mergeable_state: "unknown" });
    expect(await pullState(conflicting.body.number)).toEqual({ mergeable: false, mergeable_state: "dirty" });
    expect(await pullState(clean.body.number)).toEqual({ mergeable: true, mergeable_state: "clean" });
    await github.ci.addCheckRun(owner, repo, {
      branch: "agent-fix/issue-1",
      name: "unit",
      conclusion: "failure",
    });
    expect(await pullState(clean.body.number)).toEqual({ mergeable: true, mergeable_state: "unstable" });
    // The fields are as the pull-request schema has them.
    const shape = (fields as unknown as { shape: Record<string, { parse(v: unknown): unknown }> }).shape;
    const { body } = await call("GET", `${R}/pulls/${clean.body.number}`);
    for (const field of ["mergeable", "mergeable_state", "rebaseable"]) {
      expect(shape[field], field).toBeDefined();
      expect(() => shape[field]?.parse(body[field])).not.toThrow();
    }
    const draft = await call("POST", `${R}/pulls`, {
      title: "d",
      head: "main",
      base: "agent-fix/issue-1",
      draft: true,
    });
    expect((await pullState(draft.body.number)).mergeable_state).toBe("draft");
  });

  it("lists pull requests by base, and recomputes their mergeability after the base moves: null first", async () => {
    const intoMain = await call("GET", `${R}/pulls?base=main&state=open`);
    expect(intoMain.status).toBe(200);
    const titles = (intoMain.body as { title: string; base: { ref: string } }[]).map((p) => p.title);
    expect(titles.sort()).toEqual(["a", "b"]);
    const intoFix = await call("GET", `${R}/pulls?base=agent-fix/issue-1`);
    expect((intoFix.body as { title: string }[]).map((p) => p.title)).toEqual(["d"]);
    const clean = (intoMain.body as { title: string; number: number }[]).find((p) => p.title === "a")!;
    // A push to main (a file neither side touched): GitHub computes the pull request's mergeability anew.
    await github.commitAs("maintainer", { owner, repo, branch: "main" }, { "docs/new.md": "new\n" });
    expect(await pullState(clean.number)).toEqual({ mergeable: null, mergeable_state: "unknown" });
    expect((await pullState(clean.number)).mergeable).toBe(true);
  });

  it("reads a CODEOWNERS file through contents, where GitHub looks for one", async () => {
    const found = await call("GET", `${R}/contents/.github/CODEOWNERS`);
    expect(found.status).toBe(200);
    expect(Buffer.from(found.body.content, "base64").toString("utf8")).toBe(
      "src/ @octo/core\n*.md @docs-team\n",
    );
    // The other places GitHub reads (the root, docs/) hold none here.
    expect((await call("GET", `${R}/contents/CODEOWNERS`)).status).toBe(404);
    expect((await call("GET", `${R}/contents/docs/CODEOWNERS`)).status).toBe(404);
  });
});
