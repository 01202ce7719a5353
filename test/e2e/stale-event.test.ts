/**
 * A queued job runs only if what its event claimed is still true on GitHub when a worker takes it:
 * the issue open, the label on it, the pull request of a review run open, and whoever asked still a
 * writer. Before, the worker trusted the job (the event's payload): an issue closed and unlabelled
 * after queueing (its close and unlabel webhooks lost, say while the server was down) got a full paid
 * run that force-pushed the branch, and so did a label, a `/agent-fix` or a review from someone whose
 * access had since been lowered to read. A review whose pull request was closed meanwhile ends the same way. The whole product (real webhook server and worker, real Redis, real Docker,
 * the GitHub stand-in, the OpenAI-compatible model stand-in, which counts every request); the worker
 * starts only once the jobs are queued and GitHub has changed under them.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixBranch } from "../../src/shared/fix-branch.js";
import { fixJobId } from "../../src/shared/queue/index.js";
import { type ContainerCreates, watchContainerCreates } from "../support/container-events.js";
import { sampleFixReplies, stackWithModelStandIn } from "../support/model-stack.js";
import type { OpenAIStandIn } from "../support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { type SampleRepo, sampleConfig } from "../support/stack.js";
import { commentPayload, type IssueRef, waitFor } from "../support/stack-parts.js";
import { reviewEvent } from "../support/webhooks.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("a job whose event no longer holds on GitHub", () => {
  const { stack, start, stop } = stackWithModelStandIn({ worker: false });
  let model: OpenAIStandIn;
  let creates: ContainerCreates;
  /** Containers this stack's workers created since the file began (removed ones too). */
  const containersCreated = () => creates.createdBy(stack.prefix);

  const branchSha = (issue: IssueRef, branch = fixBranch(issue.number)) => {
    try {
      return execFileSync(
        "git",
        ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), "rev-parse", `refs/heads/${branch}`],
        { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
      ).trim();
    } catch {
      return null;
    }
  };
  const jobState = (issue: IssueRef) =>
    stack.app!.queue.queue.getJobState(fixJobId(issue.repoId, issue.number));
  const finalStatus = (issue: IssueRef) =>
    waitFor("the final status", () => stack.finalStatus(issue)?.body, 240_000);
  const lower = (repo: SampleRepo, login: string) =>
    stack.github.state.repo(repo.owner, repo.name)!.permissions.set(login, "read");

  /**
   * The app's pull request for a new issue (its branch made from main) and a review asking for
   * changes on it from `maintainer`, queued as a review run.
   */
  async function queueReview(name: string) {
    const repo = await stack.addSampleRepo(name, sampleConfig(null));
    const issue = stack.addIssue(repo);
    const branch = fixBranch(issue.number);
    execFileSync("git", ["--git-dir", stack.github.repoDir(repo.owner, repo.name), "branch", branch, "main"]);
    const pullNumber = stack.github.addPull(repo.owner, repo.name, {
      ...{ title: issue.title, body: `Fixes #${issue.number}`, head: branch },
    }).number;
    const review = reviewEvent(
      stack.github,
      { owner: repo.owner, repo: repo.name, pull: pullNumber },
      "changes_requested",
      { login: "maintainer" },
      { body: "Handle an empty list too." },
    );
    expect(await stack.send(review.event, review.payload)).toBe(200);
    return { repo, issue, pullNumber, sha: branchSha(issue) };
  }

  beforeAll(async () => {
    creates = await watchContainerCreates();
    model = await start();
    // Enough for two full runs, as the code before the fix made: none of it may be asked for.
    model.enqueue(...sampleFixReplies(), ...sampleFixReplies());
  });
  afterAll(async () => {
    creates?.stop();
    await stop();
  });

  it("starts no sandbox, asks the model nothing and pushes nothing", async () => {
    // 1. Labelled, queued; then closed and unlabelled on GitHub, the webhooks of both lost.
    const closedRepo = await stack.addSampleRepo("stale-closed", sampleConfig(null));
    const closed = stack.addIssue(closedRepo);
    expect(await stack.label(closed)).toBe(200);
    const standIn = stack.github.state.issue(closed.owner, closed.repo, closed.number)!;
    standIn.state = "closed";
    standIn.labels = [];

    // 2. Labelled, queued; then unlabelled on GitHub (the issue stays open), the webhook lost.
    const unlabelledRepo = await stack.addSampleRepo("stale-unlabelled", sampleConfig(null));
    const unlabelled = stack.addIssue(unlabelledRepo);
    expect(await stack.label(unlabelled)).toBe(200);
    stack.github.state.issue(unlabelled.owner, unlabelled.repo, unlabelled.number)!.labels = [];

    // 3. Labelled by a writer whose access was lowered to read after the event.
    const demotedRepo = await stack.addSampleRepo("stale-demoted", sampleConfig(null));
    const demoted = stack.addIssue(demotedRepo);
    expect(await stack.label(demoted)).toBe(200);
    lower(demotedRepo, "maintainer");

    // 4. A review asking for changes on the app's pull request, from a reviewer lowered to read after.
    const reviewed = await queueReview("stale-review");
    lower(reviewed.repo, "maintainer");

    // 5. A review whose pull request was closed after it was queued.
    const reviewClosed = await queueReview("stale-review-closed");
    stack.github.state.pull(
      reviewClosed.issue.owner,
      reviewClosed.issue.repo,
      reviewClosed.pullNumber,
    )!.state = "closed";

    // 6. `/agent-fix` from a writer lowered to read after the comment.
    const commentRepo = await stack.addSampleRepo("stale-comment", sampleConfig(null));
    const commented = stack.addIssue(commentRepo);
    expect(await stack.send("issue_comment", commentPayload(commented, "/agent-fix", "maintainer"))).toBe(
      200,
    );
    lower(commentRepo, "maintainer");

    // All queued while no worker runs.
    const all = [closed, unlabelled, demoted, reviewed.issue, reviewClosed.issue, commented];
    for (const issue of all) expect(["waiting", "prioritized"]).toContain(await jobState(issue));
    await stack.startWorker();

    expect(await finalStatus(closed)).toContain(
      `#${closed.number} was closed since this run was queued, so nothing was done`,
    );
    expect(await finalStatus(unlabelled)).toContain(
      `The \`agent-fix\` label was removed from #${unlabelled.number} since this run was queued, so nothing was done`,
    );
    expect(await finalStatus(demoted)).toContain(
      "@maintainer no longer has write access to this repository since this run was queued, so nothing was done",
    );
    for (const issue of [reviewed.issue, commented]) {
      expect(await finalStatus(issue)).toContain(
        "@maintainer no longer has write access to this repository since this run was queued, so nothing was done",
      );
    }
    expect(await finalStatus(reviewClosed.issue)).toContain(
      `Pull request #${reviewClosed.pullNumber} was closed since this run was queued, so nothing was done`,
    );
    for (const issue of all) {
      await waitFor("the job to end", async () => (await jobState(issue)) === "completed");
    }
    // No model request, no container, no push, no pull request.
    expect(model.requests).toHaveLength(0);
    expect(containersCreated()).toEqual([]);
    expect(branchSha(closed)).toBeNull();
    expect(branchSha(unlabelled)).toBeNull();
    expect(branchSha(demoted)).toBeNull();
    expect(branchSha(commented)).toBeNull();
    for (const review of [reviewed, reviewClosed]) expect(branchSha(review.issue)).toBe(review.sha);
    expect(stack.pulls(closed)).toEqual([]);
    expect(stack.pulls(unlabelled)).toEqual([]);
    expect(stack.pulls(demoted)).toEqual([]);
  }, 400_000);
});
