import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixJobData } from "../../../../../src/shared/queue/index.js";
import { cloneRepository } from "../../../../../worker/run/checkout/clone.js";
import {
  feedbackOf,
  loadReviewRun,
  type ReviewApi,
  reviewTaskBody,
} from "../../../../../worker/run/open/review-task.js";
import { replyInReviewThreads, threadReplyBody } from "../../../../../worker/run/publish/review-replies.js";
import { commitPatch, pushFixBranch } from "../../../../../worker/run/push/commit.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";
import { pullCommentEvent, reviewEvent } from "../../../../support/webhooks.js";

// The worker's side of a review run against the GitHub and git stand-in (real HTTP, real git).
describe("review runs: reading the review, and pushing on top of the reviewed branch", () => {
  let github: GitHubServer;
  let api: ReviewApi;
  let root: string;
  const owner = "octo";
  const repo = "demo";
  const identity = { name: "agent-fix-test[bot]", email: "bot@users.noreply.example" };
  const branch = "agent-fix/issue-1";
  let job: FixJobData;

  const cloneUrl = () => `${github.url}/${owner}/${repo}.git`;
  /** Commits a new file `name` (a patch that applies on any commit of the branch). */
  const commitFile = async (dir: string, name: string, title: string) => {
    const patch = `diff --git a/${name}.txt b/${name}.txt\nnew file mode 100644\n--- /dev/null\n+++ b/${name}.txt\n@@ -0,0 +1 @@\n+${name}\n`;
    await commitPatch({ dir, patch, identity, issueNumber: 1, issueTitle: title, forbiddenPaths: [] });
  };
  const addPull = (head: string) => github.addPull(owner, repo, { head }).number;

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({ owner, name: repo, files: { "a.txt": "a\n" }, permissions: { alice: "write" } });
    github.addIssue(owner, repo, { title: "a.txt needs a second line", body: "Add `b`." });
    root = await mkdtemp(join(tmpdir(), "af-review-"));
    const dir = join(root, "first");
    await cloneRepository({ cloneUrl: cloneUrl(), token: github.mintToken(), dir, branch: "main" });
    await commitFile(dir, "b", "first fix");
    await pushFixBranch({ dir, issueNumber: 1, token: github.mintToken() });
    api = await installationApi<ReviewApi>(github);
    const repoId = github.state.repo(owner, repo)?.id ?? 0;
    job = {
      ...{ installationId: 1, owner, repo, repoId, issueNumber: 1, requestedBy: "alice" },
      ...{ trigger: "review" as const, deliveryId: "d-1" },
    };
  });
  afterAll(async () => {
    await github.stop();
    await rm(root, { recursive: true, force: true });
  });

  it("the task is the issue plus the review's body and line comments; the branch is the PR's", async () => {
    const pull = addPull(branch);
    const delivery = reviewEvent(
      github,
      { owner, repo, pull },
      "changes_requested",
      { login: "alice" },
      {
        body: "Almost.",
        comments: [
          { path: "a.txt", line: 2, body: "Use a capital B." },
          { path: "a.txt", line: 1, body: "And keep this line." },
        ],
      },
    );
    const reviewId = (delivery.payload.review as { id: number }).id;
    const issue = { number: 1, title: "a.txt needs a second line", body: "Add `b`." };
    const run = await loadReviewRun(api, { ...job, pullNumber: pull, reviewId }, issue, identity.name);
    expect(run.existingBranch).toBe(branch);
    expect(run.commitTitle).toBe(`Address the review on #${pull}`);
    expect(run.issue?.title).toBe(issue.title);
    expect(run.issue?.body).toBe(
      reviewTaskBody("Add `b`.", pull, { body: "Almost.", user: { login: "alice" } }, [
        { path: "a.txt", line: 2, body: "Use a capital B." },
        { path: "a.txt", line: 1, body: "And keep this line." },
      ]),
    );
    expect(run.issue?.body).toContain("Add `b`.");
    expect(run.issue?.body).toContain("Review by @alice:\n\nAlmost.");
    expect(run.issue?.body).toContain(
      "- `a.txt` line 2: Use a capital B.\n- `a.txt` line 1: And keep this line.",
    );
  });

  it("refuses a closed pull request or one on another branch, saying which and what to do", async () => {
    const closed = addPull(branch);
    github.state.pull(owner, repo, closed)!.state = "closed";
    const issue = { number: 1, title: "t", body: null };
    await expect(
      loadReviewRun(api, { ...job, pullNumber: closed }, issue, identity.name),
    ).rejects.toMatchObject({
      code: "pull_request_closed",
      hint: "Reopen it and request changes again.",
    });
    const other = addPull("main");
    await expect(
      loadReviewRun(api, { ...job, pullNumber: other }, issue, identity.name),
    ).rejects.toMatchObject({
      code: "not_fix_pull_request",
    });
    await expect(loadReviewRun(api, { ...job, pullNumber: 999 }, issue, identity.name)).rejects.toMatchObject(
      {
        code: "github_404",
      },
    );
  });

  it("refuses the fix branch's pull request when another bot or a person opened it", async () => {
    const issue = { number: 1, title: "t", body: null };
    for (const user of [
      { login: "other-app[bot]", id: 91_000, type: "Bot" as const },
      { login: "agent-fix-test[bot]", id: 92_000, type: "User" as const },
    ]) {
      const pull = addPull(branch);
      github.state.pull(owner, repo, pull)!.user = user;
      await expect(
        loadReviewRun(api, { ...job, pullNumber: pull }, issue, identity.name),
      ).rejects.toMatchObject({
        code: "not_fix_pull_request",
        message: expect.stringContaining(`opened by ${user.login}`),
      });
    }
  });

  it("pushes a new commit on top without force, and refuses to overwrite a branch that moved meanwhile", async () => {
    const before = (await github.branches(owner, repo))[branch];
    const ours = join(root, "ours");
    await cloneRepository({ cloneUrl: cloneUrl(), token: github.mintToken(), dir: ours, branch });
    // Someone pushes to the branch while "the agent" works on its own clone.
    const theirs = join(root, "theirs");
    await cloneRepository({ cloneUrl: cloneUrl(), token: github.mintToken(), dir: theirs, branch });
    await commitFile(theirs, "theirs", "a maintainer's commit");
    await pushFixBranch({ dir: theirs, issueNumber: 1, token: github.mintToken(), force: false });
    const moved = (await github.branches(owner, repo))[branch];
    expect(moved).not.toBe(before);

    await commitFile(ours, "ours", "address the review");
    await expect(
      pushFixBranch({ dir: ours, issueNumber: 1, token: github.mintToken(), force: false }),
    ).rejects.toMatchObject({ code: "branch_moved", fault: "user" });
    expect((await github.branches(owner, repo))[branch]).toBe(moved);
  });

  it("a comment command's request is the comment's lines after the command", async () => {
    const pull = addPull(branch);
    const delivery = pullCommentEvent(
      github,
      { owner, repo, pull },
      "\n/agent-fix\nName the new line `c` instead.",
      { login: "alice" },
    );
    const commentId = (delivery.payload.comment as { id: number }).id;
    const run = await loadReviewRun(
      api,
      { ...job, pullNumber: pull, commentId },
      {
        number: 1,
        title: "t",
        body: "Add `b`.",
      },
      identity.name,
    );
    expect(run.issue?.body).toContain("Review by @alice:\n\nName the new line `c` instead.");
    expect(run.issue?.body).not.toContain("/agent-fix");
  });

  it("a long issue is cut so the review still reaches the agent", () => {
    const body = reviewTaskBody(
      "x".repeat(30_000),
      2,
      { body: "Fix the name.", user: { login: "alice" } },
      [],
    );
    expect(body.length).toBeLessThan(9_000);
    expect(body).toContain("[The issue text was cut here to leave room for the review.]");
    expect(body.endsWith("Review by @alice:\n\nFix the name.")).toBe(true);
  });

  it("a follow-up round's task holds every review and request that came in; each line comment gets a reply in its thread", async () => {
    const pull = addPull(branch);
    const first = reviewEvent(
      github,
      { owner, repo, pull },
      "changes_requested",
      { login: "alice" },
      {
        body: "Rename the helper.",
        comments: [
          { path: "a.txt", line: 1, body: "Say what it is." },
          { path: "a.txt", line: 2, body: "Capital B." },
        ],
      },
    );
    const second = reviewEvent(
      github,
      { owner, repo, pull },
      "changes_requested",
      { login: "bob" },
      {
        body: "Add a test.",
      },
    );
    const command = pullCommentEvent(github, { owner, repo, pull }, "/agent-fix\nAnd a changelog line.", {
      login: "carol",
    });
    const idOf = (d: typeof first, key: "review" | "comment") => (d.payload[key] as { id: number }).id;
    const followUp: FixJobData = {
      ...job,
      pullNumber: pull,
      feedback: [
        { reviewId: idOf(first, "review"), by: "alice" },
        { reviewId: idOf(second, "review"), by: "bob" },
        { commentId: idOf(command, "comment"), by: "carol" },
      ],
    };
    const issue = { number: 1, title: "a.txt needs a second line", body: "Add `b`." };
    const task = (await loadReviewRun(api, followUp, issue, identity.name)).issue?.body ?? "";
    expect(task.match(/Add `b`\./g)).toHaveLength(1);
    expect(task).toContain("Review by @alice:\n\nRename the helper.");
    expect(task).toContain("- `a.txt` line 1: Say what it is.\n- `a.txt` line 2: Capital B.");
    expect(task).toContain("Review by @bob:\n\nAdd a test.");
    expect(task).toContain("Review by @carol:\n\nAnd a changelog line.");
    expect(task).toContain("(3 reviews came in; address all of them.)");

    const posted = await replyInReviewThreads(
      api,
      { owner, repo, pull_number: pull },
      feedbackOf(followUp),
      branch,
    );
    expect(posted).toBe(2);
    const threads = github.state.review(owner, repo, idOf(first, "review"))?.comments ?? [];
    expect(threads.map((c) => c.replies?.map((r) => [r.user.login, r.body]))).toEqual([
      [[github.bot.login, threadReplyBody(branch)]],
      [[github.bot.login, threadReplyBody(branch)]],
    ]);
    expect(
      github.state.requests
        .filter((r) => r.method === "POST" && r.path.endsWith("/replies"))
        .map((r) => r.status),
    ).toEqual([201, 201]);
  });
});
