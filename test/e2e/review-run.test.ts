import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixJobId } from "../../src/shared/queue/index.js";
import { requestChanges, reviewRunPushed } from "../support/review-round.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { FIXTURES, type IssueRef, SAMPLE_REPLAY, waitFor } from "../support/stack-parts.js";
import { pullCommentEvent } from "../support/webhooks.js";

// Real Redis, real Docker sandboxes, the real app and worker; GitHub is the stand-in, the model a
// replay read from a file that the test swaps between the issue run and the review run.
const ready = (await requireRedis()) && (await requireSandboxImage());
const LINE_COMMENT = "Say in a comment why the two middle values are averaged.";

describe.runIf(ready)(
  "changes requested on the app's pull request -> a new commit on the same branch",
  () => {
    const replay = join(tmpdir(), `af-review-replay-${randomUUID()}.jsonl`);
    const stack = new Stack({ model: `replay:${replay}` });
    let issue: IssueRef;

    beforeAll(async () => {
      await copyFile(SAMPLE_REPLAY, replay);
      await stack.start();
      issue = stack.addIssue(await stack.addSampleRepo("textstats-review"));
    });
    afterAll(async () => {
      await stack.stop();
      await rm(replay, { force: true });
    });

    it("label -> PR; a review with a line comment -> a second commit on top, one PR, a summary and a reply", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      expect(await stack.label(issue)).toBeLessThan(300);
      await waitFor("the issue run to finish", () => stack.finalStatus(issue), 240_000);
      // The final status is posted just before the job completes; a review before that is refused.
      const job = fixJobId(issue.repoId, issue.number);
      await waitFor(
        "the issue job to complete",
        async () => (await stack.app!.queue.queue.getJobState(job)) === "completed",
      );
      expect(stack.finalStatus(issue)?.body).toContain("opened draft pull request #");
      const [pr] = stack.pulls(issue);
      expect(pr).toBeDefined();
      const first = (await stack.github.branches(issue.owner, issue.repo))[branch];
      expect(first).toBeDefined();

      // The maintainer asks for changes with a line comment; the next run replays the review's answer.
      const { review, answered } = await requestChanges(stack, issue, {
        replay,
        body: "Good fix, one thing before it can go in.",
        comment: LINE_COMMENT,
      });
      expect(answered).toBeLessThan(300);
      // Acknowledged on the pull request at once (not refused as a duplicate of the issue run).
      const acknowledged = stack.github.state
        .commentsOn(issue.owner, issue.repo, pr!.number)
        .map((c) => c.body)
        .filter((body) => body.startsWith("@maintainer"));
      expect(acknowledged).toEqual([
        expect.stringContaining("@maintainer agent-fix is working on your review"),
      ]);
      const reviewStatus = await reviewRunPushed(stack, issue, first, 240_000);
      expect(reviewStatus).toContain(
        `pushed a commit addressing the review to pull request #${pr!.number}: http`,
      );
      expect(reviewStatus).not.toContain("opened draft pull request");

      // Still exactly one pull request, the same one, open.
      expect(stack.pulls(issue)).toHaveLength(1);
      expect(stack.pulls(issue)[0]).toMatchObject({ number: pr!.number, head: branch, state: "open" });

      // A second commit on top of the first (a fast-forward, nothing rewritten), by the app, with the change.
      const git = (...args: string[]) =>
        execFileSync("git", ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), ...args], {
          encoding: "utf8",
        }).trim();
      expect(git("rev-list", "--count", `main..${branch}`)).toBe("2");
      expect(git("rev-parse", `${branch}^`)).toBe(first);
      expect(git("log", "-1", "--format=%an|%s|%b", branch)).toBe(
        `agent-fix-e2e[bot]|Address the review on #${pr!.number}|Fixes #${issue.number}`,
      );
      expect(git("diff", "--name-only", `${branch}^..${branch}`)).toBe("textstats/stats.py");
      const stats = git("show", `${branch}:textstats/stats.py`);
      expect(stats).toContain("# An even count has two middle values: the median is their mean.");
      expect(stats).toContain("(ordered[middle - 1] + ordered[middle]) / 2"); // the first fix kept

      // On the pull request: the acknowledgement, a second trajectory summary, and the reply to the review.
      const onPull = stack.github.state.commentsOn(issue.owner, issue.repo, pr!.number).map((c) => c.body);
      const summaries = onPull.filter((body) => body.includes("<!-- agent-fix:summary -->"));
      expect(summaries).toHaveLength(2);
      const reviewId = (review.payload.review as { id: number }).id;
      const reply = onPull.find((body) => body.includes(`#pullrequestreview-${reviewId}`));
      expect(reply).toContain(`@maintainer I pushed a new commit to \`${branch}\``);
      expect(reply).toContain("a comment now says why the even case returns the mean");
      // And in the thread of the line comment it addressed: exactly one reply, from the app.
      const lineComment = stack.github.state.review(issue.owner, issue.repo, reviewId)?.comments[0];
      expect(lineComment?.replies?.map((r) => [r.user.login, r.body])).toEqual([
        ["agent-fix-e2e[bot]", expect.stringContaining(`Addressed in the new commit on \`${branch}\``)],
      ]);

      // The agent's task was the issue plus the review, read from GitHub by the worker.
      const link = /\[Full trajectory\]\((\S+)\)/.exec(summaries[1]!)?.[1];
      expect(link).toBeDefined();
      const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as {
        history: { role: string; content: string }[];
      };
      const task = trajectory.history.find((m) => m.role === "user")?.content ?? "";
      expect(task).toContain(issue.title);
      expect(task).toContain("Good fix, one thing before it can go in.");
      expect(task).toContain(`- \`textstats/stats.py\` line 21: ${LINE_COMMENT}`);

      // One status comment on the issue, reused by both runs.
      const statuses = stack.github.state
        .commentsOn(issue.owner, issue.repo, issue.number)
        .filter((c) => c.body.includes("<!-- agent-fix:status -->"));
      expect(statuses).toHaveLength(1);
    }, 540_000);

    it("/agent-fix with a request on the pull request -> a third commit on the same branch and PR", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const [pr] = stack.pulls(issue);
      const job = fixJobId(issue.repoId, issue.number);
      await waitFor(
        "the review job to complete",
        async () => (await stack.app!.queue.queue.getJobState(job)) === "completed",
      );
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch];
      await copyFile(join(FIXTURES, "replay", "sample-review-request.jsonl"), replay);
      const request = "Also say what `middle` is for an even count.";
      const comment = pullCommentEvent(
        stack.github,
        { owner: issue.owner, repo: issue.repo, pull: pr!.number },
        `/agent-fix\n${request}`,
        { login: "maintainer" },
      );
      expect(await stack.send(comment.event, comment.payload)).toBeLessThan(300);
      const commentId = (comment.payload.comment as { id: number }).id;
      expect(
        stack.github.state.reactions.some((r) => r.commentId === commentId && r.content === "eyes"),
      ).toBe(true);
      await waitFor(
        "the requested run to push and finish",
        async () =>
          (await stack.github.branches(issue.owner, issue.repo))[branch] !== before &&
          stack.finalStatus(issue),
        240_000,
      );
      const git = (...args: string[]) =>
        execFileSync("git", ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), ...args], {
          encoding: "utf8",
        }).trim();
      expect(git("rev-list", "--count", `main..${branch}`)).toBe("3");
      expect(git("rev-parse", `${branch}^`)).toBe(before);
      expect(git("show", `${branch}:textstats/stats.py`)).toContain(
        "# For an even count, middle is the upper of the two middle indices.",
      );
      expect(stack.pulls(issue)).toHaveLength(1);
      const onPull = stack.github.state.commentsOn(issue.owner, issue.repo, pr!.number).map((c) => c.body);
      const summaries = onPull.filter((body) => body.includes("<!-- agent-fix:summary -->"));
      expect(summaries).toHaveLength(3);
      expect(onPull.find((body) => body.includes(`#issuecomment-${commentId}`))).toContain(
        "@maintainer I pushed a new commit",
      );
      const link = /\[Full trajectory\]\((\S+)\)/.exec(summaries[2]!)?.[1];
      const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as {
        history: { role: string; content: string }[];
      };
      const task = trajectory.history.find((m) => m.role === "user")?.content ?? "";
      expect(task).toContain(`Review by @maintainer:\n\n${request}`);
      expect(task).not.toContain("/agent-fix");
    }, 300_000);
    it("a review run handed back on SIGTERM while it pushes: the next worker only pushes and publishes, and says it resumed", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const [pr] = stack.pulls(issue);
      const job = fixJobId(issue.repoId, issue.number);
      const queue = stack.app!.queue.queue;
      await waitFor("the review job to complete", async () => (await queue.getJobState(job)) === "completed");
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch];
      await copyFile(join(FIXTURES, "replay", "sample-review-note.jsonl"), replay);
      const held = stack.github.pushFaults.hold(issue.owner, issue.repo);
      const comment = pullCommentEvent(
        stack.github,
        { owner: issue.owner, repo: issue.repo, pull: pr!.number },
        "/agent-fix\nSay that median() leaves the list it is given alone.",
        { login: "maintainer" },
      );
      expect(await stack.send(comment.event, comment.payload)).toBeLessThan(300);
      await waitFor("the review run to push", () => held.arrived.then(() => true), 240_000);
      // A deploy stops the worker with no grace while its run pushes: the run goes back to the queue.
      await stack.stopWorker(0);
      expect(await queue.getJobState(job)).toBe("waiting");
      expect(stack.statusComment(issue)?.body).toContain("without running the agent again");
      held.release();
      // Nothing left to replay: a worker that ran the agent again would fail at its first step.
      await writeFile(replay, "");
      await stack.startWorker();
      await waitFor(
        "the resumed run to push and finish",
        async () =>
          (await stack.github.branches(issue.owner, issue.repo))[branch] !== before &&
          stack.finalStatus(issue),
        240_000,
      );
      expect(stack.finalStatus(issue)?.body).toContain(
        `pushed a commit addressing the review to pull request #${pr!.number}`,
      );
      const git = (...args: string[]) =>
        execFileSync("git", ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), ...args], {
          encoding: "utf8",
        }).trim();
      expect(git("rev-parse", `${branch}^`)).toBe(before);
      expect(git("show", `${branch}:textstats/stats.py`)).toContain(
        "# median() sorts a copy: the list it is given is left as it was.",
      );
      // After the hand-back: publishing, marked resumed; the agent's phase never again.
      const history = stack.statusComment(issue)!.history;
      const current = (body: string) => body.split("\n").find((line) => line.includes("⏳")) ?? "";
      const after = history.slice(
        history.findLastIndex((body) => body.includes("went back to the queue")) + 1,
      );
      expect(
        after.some(
          (body) =>
            current(body).includes("**Opening the pull request") &&
            body.includes("Resumed on another worker"),
        ),
      ).toBe(true);
      expect(after.filter((body) => current(body).includes("**Working on a fix"))).toEqual([]);
      const commentId = (comment.payload.comment as { id: number }).id;
      const onPull = stack.github.state.commentsOn(issue.owner, issue.repo, pr!.number).map((c) => c.body);
      expect(onPull.find((body) => body.includes(`#issuecomment-${commentId}`))).toContain(
        "@maintainer I pushed a new commit",
      );
    }, 480_000);
  },
);
