import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { githubLength, STATUS_MARKER } from "../../../../../src/shared/github/index.js";
import { linkPolicy } from "../../../../../src/shared/github/inert-links.js";
import type { FixJobData } from "../../../../../src/shared/queue/index.js";
import { NOT_A_DRAFT_NOTE } from "../../../../../worker/github/pull-request.js";
import { cloneRepository } from "../../../../../worker/run/checkout/clone.js";
import { type ReviewApi, reviewPublisher } from "../../../../../worker/run/open/review-task.js";
import { githubStatusReporter, type WorkerGitHubApi } from "../../../../../worker/run/open/status-comment.js";
import { githubPublisher } from "../../../../../worker/run/publish/github-publisher.js";
import { publishPullRequest } from "../../../../../worker/run/publish/publish-pull-request.js";
import { commitPatch, pushFixBranch } from "../../../../../worker/run/push/commit.js";
import { liveOutsideUrls } from "../../../../support/github/live-text.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";
import { draftOf, submittedTrajectory } from "../../../../support/published.js";

// Publishing after the push, against the GitHub stand-in answering as GitHub documents (real HTTP).
describe("publishing a tested change", () => {
  let github: GitHubServer;
  let api: WorkerGitHubApi;
  let root: string;
  const owner = "octo";
  let repos = 0;
  const forbidden = {
    message: "Resource not accessible by integration",
    documentation_url: "https://docs.github.com/rest/issues/comments#update-an-issue-comment",
    status: "403",
  };

  /** A repository with issue #1 (asked for by alice) and the branch agent-fix/issue-1 pushed. */
  async function repoWithBranch(plan?: "free" | "team") {
    const name = `repo-${repos++}`;
    const repo = await github.addRepo({
      owner,
      name,
      files: { "a.txt": "a\n" },
      permissions: { alice: "write" },
    });
    const standIn = github.state.repo(owner, name);
    if (standIn && plan) standIn.plan = plan;
    github.addIssue(owner, name, { title: "a.txt needs b", body: "Add b." });
    const dir = join(root, name);
    await cloneRepository({
      cloneUrl: `${github.url}/${owner}/${name}.git`,
      token: github.mintToken(),
      dir,
      branch: "main",
    });
    const patch =
      "diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n";
    const identity = { name: "agent-fix-test[bot]", email: "bot@users.noreply.example" };
    await commitPatch({
      dir,
      patch,
      identity,
      issueNumber: 1,
      issueTitle: "a.txt needs b",
      forbiddenPaths: [],
    });
    await pushFixBranch({ dir, issueNumber: 1, token: github.mintToken() });
    const job: FixJobData = {
      ...{ installationId: 1, owner, repo: name, repoId: repo.id, issueNumber: 1, requestedBy: "alice" },
      ...{ trigger: "label" as const, deliveryId: `d-${name}` },
    };
    return { name, job };
  }
  const statusComments = (name: string) =>
    github.state.commentsOn(owner, name, 1).filter((c) => c.body.includes(STATUS_MARKER));

  beforeAll(async () => {
    github = await startGitHubServer();
    root = await mkdtemp(join(tmpdir(), "af-publish-"));
    api = await installationApi<WorkerGitHubApi>(github);
  });
  afterAll(async () => {
    await github.stop();
    await rm(root, { recursive: true, force: true });
  });

  it("where GitHub refuses drafts (private repository, Free plan) it opens a ready pull request saying why", async () => {
    const { name, job } = await repoWithBranch("free");
    const status = githubStatusReporter(api, job);
    const published = await publishPullRequest({
      publisher: githubPublisher(api, job),
      status,
      draft: draftOf(submittedTrajectory("Added b.")),
      requestedBy: "alice",
    });
    const pulls = github.state.pulls.filter((p) => p.repo === name);
    expect(pulls).toHaveLength(1);
    expect(pulls[0]).toMatchObject({ draft: false, state: "open", reviewRequests: ["alice"] });
    expect(pulls[0]?.body.startsWith(NOT_A_DRAFT_NOTE)).toBe(true);
    expect(pulls[0]?.body).toContain("Fixes #1");
    expect(published).toMatchObject({ number: pulls[0]?.number, draft: false });
    // The stand-in refused the draft first, as GitHub does.
    const creates = github.state.requests.filter(
      (r) => r.method === "POST" && r.path === `/repos/${owner}/${name}/pulls`,
    );
    expect(creates.map((r) => r.status)).toEqual([422, 201]);
    const [comment] = statusComments(name);
    expect(comment?.body).toContain(`✅ **agent-fix** opened pull request #${pulls[0]?.number}`);
    expect(comment?.body).toContain(
      "It is not a draft: GitHub does not support draft pull requests in this repository",
    );
    expect(comment?.body).not.toContain("draft pull request #");
  });

  it("on a plan with drafts it stays a draft", async () => {
    const { name, job } = await repoWithBranch("team");
    await publishPullRequest({
      publisher: githubPublisher(api, job),
      status: githubStatusReporter(api, job),
      draft: draftOf(submittedTrajectory("Added b.")),
      requestedBy: "alice",
    });
    const pull = github.state.pulls.find((p) => p.repo === name);
    expect(pull?.draft).toBe(true);
    expect(pull?.body.startsWith(NOT_A_DRAFT_NOTE)).toBe(false);
    expect(statusComments(name)[0]?.body).toContain("opened draft pull request #");
  });

  it("once the pull request is open, a failing summary and a refused review request are named beside it", async () => {
    const { name, job } = await repoWithBranch();
    const pullNumber = github.state.nextNumber(owner, name);
    github.failAlways("POST", new RegExp(`^/repos/${owner}/${name}/issues/${pullNumber}/comments$`), 502, {
      message: "Server Error",
    });
    const published = await publishPullRequest({
      publisher: githubPublisher(api, job),
      status: githubStatusReporter(api, job),
      draft: draftOf(submittedTrajectory("Added b.")),
      requestedBy: "stranger",
    });
    expect(published.number).toBe(pullNumber);
    const body = statusComments(name)[0]?.body ?? "";
    expect(body).toContain(`opened draft pull request #${pullNumber}`);
    expect(body).not.toContain("stopped without a pull request");
    expect(body).not.toContain("Review requested from");
    expect(body).toContain("**What did not work:**");
    expect(body).toContain(
      "- Review could not be requested from @stranger: GitHub refused it: Validation Failed: Reviews may only be requested from collaborators.",
    );
    expect(body).toContain("- The trajectory summary could not be posted on the pull request: Server Error");
  });

  it("a status comment that cannot be edited (403 on every edit): the final status comes as a new comment", async () => {
    const { name, job } = await repoWithBranch();
    const queued = githubStatusReporter(api, job);
    await queued.progress("cloning");
    const first = statusComments(name)[0];
    github.failAlways("PATCH", new RegExp(`^/repos/${owner}/${name}/issues/comments/\\d+$`), 403, forbidden);
    const status = githubStatusReporter(api, { ...job, statusCommentId: first?.id });
    await status.progress("publishing").catch(() => {});
    const published = await publishPullRequest({
      publisher: githubPublisher(api, job),
      status,
      draft: draftOf(submittedTrajectory("Added b.")),
      requestedBy: "alice",
    });
    const comments = statusComments(name);
    expect(comments).toHaveLength(2);
    expect(comments[0]?.body).toContain("⏳");
    expect(comments[1]?.body).toContain(`opened draft pull request #${published.number}`);
    // The edit was tried more than once before giving up on it.
    const edits = github.state.requests.filter(
      (r) => r.method === "PATCH" && r.path.startsWith(`/repos/${owner}/${name}/issues/comments/`),
    );
    expect(edits.map((r) => r.status)).toEqual([403, 403, 403, 403]);
  });

  it("the reply to a review fits GitHub's limit however long the agent's account", async () => {
    const { name, job } = await repoWithBranch();
    const pullNumber = github.state.nextNumber(owner, name);
    await publishPullRequest({
      publisher: githubPublisher(api, job),
      status: githubStatusReporter(api, job),
      draft: draftOf(submittedTrajectory("first")),
      requestedBy: "alice",
    });
    const review = { ...job, trigger: "review" as const, pullNumber, reviewId: 4242 };
    const publisher = reviewPublisher(api as unknown as ReviewApi, review);
    const pr = await publisher.openOrUpdatePullRequest(draftOf(submittedTrajectory("x")));
    await publisher.postSummary(
      pr.number,
      draftOf(submittedTrajectory(`Changed it. ${"🔧 fixed ".repeat(12_000)}`)),
    );
    const reply = github.state.commentsOn(owner, name, pullNumber).find((c) => c.body.startsWith("@alice"));
    expect(reply?.body).toContain("I pushed a new commit to `agent-fix/issue-1`");
    expect(githubLength(reply?.body ?? "")).toBeLessThanOrEqual(65_536);
    expect(reply?.body).toContain("cut to fit GitHub's 65,536-character limit");
  });
  it("the reply to a review holds no image or link to a host the operator did not allow", async () => {
    const { name, job } = await repoWithBranch();
    const pullNumber = github.state.nextNumber(owner, name);
    await publishPullRequest({
      publisher: githubPublisher(api, job),
      status: githubStatusReporter(api, job),
      draft: draftOf(submittedTrajectory("first")),
      requestedBy: "alice",
    });
    const review = { ...job, trigger: "review" as const, pullNumber, reviewId: 4343 };
    const links = linkPolicy(`http://${github.host}`, ["docs.example.com"]);
    const publisher = reviewPublisher(api as unknown as ReviewApi, review, { links });
    const pr = await publisher.openOrUpdatePullRequest(draftOf(submittedTrajectory("x")));
    const account =
      'Addressed it. ![ok](https://evil.example/p.png?d=c2VjcmV0) <img src="//evil.example/i.png">\n' +
      "[Approve and merge](https://evil.example/approve), see [the docs](https://docs.example.com/x).";
    await publisher.postSummary(pr.number, draftOf(submittedTrajectory(account)));
    const reply = github.state.commentsOn(owner, name, pullNumber).find((c) => c.body.startsWith("@alice"));
    expect(reply?.body).toContain("> Addressed it.");
    expect(liveOutsideUrls(reply?.body ?? "", [github.host, "docs.example.com"])).toEqual([]);
    expect(reply?.body).toContain("[the docs](https://docs.example.com/x)");
    expect(reply?.body).toContain(
      "> [Approve and merge]\u200B(`https://evil.example/approve`), (link to a host not allowed)",
    );
  });

  it("a failed run's final status links its trajectory once, with and without the work it left", async () => {
    const { name, job } = await repoWithBranch();
    const trajectoryUrl = "http://127.0.0.1:1/trajectories/octo-run-1.traj?expires=1&sig=x";
    const status = githubStatusReporter(api, job, { trajectoryUrl, trajectoryWritten: () => true });
    const work = {
      exitStatus: "exit_step_limit" as const,
      testCommand: "make test",
      diff: { kind: "shown" as const, patch: "diff --git a/a.txt b/a.txt\n" },
      tests: { kind: "not_run" as const, why: "no change" },
    };
    for (const left of [undefined, work]) {
      await status.failed("The agent stopped.", { trajectory: submittedTrajectory("Tried."), work: left });
      const body = statusComments(name)[0]?.body ?? "";
      expect(body).toContain("stopped without a pull request");
      expect(body).toContain("Tried.");
      expect(body.split(`[Full trajectory](${trajectoryUrl})`)).toHaveLength(2);
    }
  });
});
