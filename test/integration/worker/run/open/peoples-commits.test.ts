/**
 * A relabel with people's commits on `agent-fix/issue-N`: who made them and how many, read from the
 * stand-in's compare (GitHub's documented answer), and the status comment that says, from the run's
 * first update to its final one, that the run builds on them and how to start afresh instead.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixJobData } from "../../../../../src/shared/queue/index.js";
import { buildsOnNote, peoplesCommitsOn } from "../../../../../worker/run/open/peoples-commits.js";
import { githubStatusReporter, type WorkerGitHubApi } from "../../../../../worker/run/open/status-comment.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";

describe("a person's commits on the issue's branch", () => {
  let github: GitHubServer;
  let api: Parameters<typeof peoplesCommitsOn>[0] & WorkerGitHubApi;
  const owner = "octo";
  const repo = "people";
  const branch = "agent-fix/issue-1";
  const app = { name: "agent-fix-test[bot]", email: "90000+agent-fix-test[bot]@users.noreply.github.com" };

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({ owner, name: repo, files: { "a.txt": "a\n" }, permissions: { alice: "write" } });
    github.addIssue(owner, repo, { title: "a.txt needs b" });
    api = await installationApi(github);
  });
  afterAll(async () => {
    await github.stop();
  });

  it("no branch yet: null; only the app's commits: nobody", async () => {
    expect(await peoplesCommitsOn(api, { owner, repo }, "main", branch, app)).toBeNull();
    const target = { owner, repo, branch };
    await github.commitAs(github.bot.login, target, { "b.txt": "b\n" }, "The app's fix");
    expect(await peoplesCommitsOn(api, { owner, repo }, "main", branch, app)).toEqual([]);
  });

  it("counts each person's commits on the branch, never the app's", async () => {
    const target = { owner, repo, branch };
    await github.commitAs("alice", target, { "c.txt": "c\n" }, "Alice's first");
    await github.commitAs("bob", target, { "d.txt": "d\n" }, "Bob's");
    await github.commitAs("alice", target, { "c.txt": "c2\n" }, "Alice's second");
    const people = await peoplesCommitsOn(api, { owner, repo }, "main", branch, app);
    expect(people).toEqual([
      { who: "alice", commits: 2 },
      { who: "bob", commits: 1 },
    ]);
  });

  it("the status says it from the first update to the final one, beside a config note that changes", async () => {
    const people = [
      { who: "alice", commits: 2 },
      { who: "bob", commits: 1 },
    ];
    const note = buildsOnNote(branch, "main", people, "agent-fix");
    expect(note).toBe(
      "**Started from `agent-fix/issue-1`, not `main`:** this run builds on the commits by @alice (2), @bob (1) on that branch (3 commits agent-fix did not make). They are kept: the change goes on top as a new commit, never a force-push. To start afresh from `main` instead: comment `/agent-fix stop`, delete the branch `agent-fix/issue-1` (its pull request closes with it), then add the `agent-fix` label again.",
    );
    expect(buildsOnNote(branch, "trunk", [{ who: "carol", commits: 1 }], "fix-me")).toContain(
      "commits by @carol (1) on that branch (1 commit agent-fix did not make)",
    );

    const job: FixJobData = {
      ...{ installationId: 1, owner, repo, repoId: github.state.repo(owner, repo)!.id, issueNumber: 1 },
      ...{ requestedBy: "alice", trigger: "label" as const, deliveryId: "d-people" },
    };
    const status = githubStatusReporter(api, job);
    status.startsFrom(note);
    await status.progress("cloning");
    const comment = () => github.state.commentsOn(owner, repo, 1).at(-1)?.body ?? "";
    expect(comment()).toContain(note);
    // The configure step's note (detected commands) replaces the config note, never this one.
    status.configured("Commands detected from pyproject.toml.");
    status.configured("Reused the environment prepared at 06:00.");
    await status.failed("The tests fail.");
    expect(comment()).toContain(note);
    expect(comment()).toContain("Reused the environment prepared at 06:00.");
    expect(comment()).not.toContain("Commands detected");
  });
});
