import { randomUUID } from "node:crypto";
import { copyFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { fixJobId } from "../../src/shared/queue/index.js";
import { CHECK_RUN_NAME } from "../../worker/run/publish/check-run.js";
import { branchHead, requestChanges, reviewRunPushed } from "../support/review-round.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { type IssueRef, SAMPLE_REPLAY, waitFor } from "../support/stack-parts.js";
import { commentEvent } from "../support/webhooks.js";

// Real Redis, real Docker sandboxes, the real app and worker; GitHub is the stand-in (check runs, the
// contents API for CODEOWNERS, review requests), the model a replay the test swaps between runs.
const ready = (await requireRedis()) && (await requireSandboxImage());

// The fix changes textstats/stats.py and tests/test_stats.py: the last matching pattern decides, so the
// team of `*` owns neither, and @stranger (no access) and the address cannot be asked.
const CODEOWNERS = [
  "# Everything, then the package and its tests",
  "*             @octo/reviewers",
  "/textstats/   @owner-a @stranger   # the library",
  "tests/        @owner-a owners@example.com",
  "",
].join("\n");

// Two stacks side by side: the first issue's runs, one after another (each test takes up where the one
// before left its pull request and installation), and the cancelled run, which shares nothing with them.
describe.runIf(ready).concurrent("the app's check run, code owners' review, /agent-fix status", () => {
  describe("one issue: its run, its review round, an installation without checks: write", () => {
    const replay = join(tmpdir(), `af-checks-replay-${randomUUID()}.jsonl`);
    const stack = new Stack({ model: `replay:${replay}` });
    let issue: IssueRef;
    const ownChecks = () => stack.github.ci.checkRuns.filter((run) => run.name === CHECK_RUN_NAME);
    const repliesTo = (login: string, on: number) =>
      stack.github.state
        .commentsOn(issue.owner, issue.repo, on)
        .filter((c) => c.user.login === stack.github.bot.login && c.body.startsWith(`@${login} `))
        .map((c) => c.body);

    beforeAll(async () => {
      await copyFile(SAMPLE_REPLAY, replay);
      await stack.start();
      const repo = await stack.addSampleRepo("textstats-checks", { ".github/CODEOWNERS": CODEOWNERS });
      stack.github.state.repos.find((r) => r.id === repo.id)?.permissions.set("owner-a", "write");
      issue = stack.addIssue(repo);
    });
    afterAll(async () => {
      await stack.stop();
      await rm(replay, { force: true });
    });

    it.sequential("label -> the check run on the pushed commit, in progress then completed; review from the code owners; status while it runs", async ({
      expect,
    }) => {
      // The held push is answered 503 on release: the job's next attempt pushes and publishes the kept
      // change (resume-publishing.ts), so this check run is the resumed publish's; the review round's
      // below is the spine's (run-fix.ts).
      const held = stack.github.pushFaults.hold(issue.owner, issue.repo);
      expect(await stack.label(issue)).toBeLessThan(300);
      await waitFor("the run to push", () => held.arrived.then(() => true), 240_000);
      // Someone with read access asks how it goes while the run pushes.
      const ask = commentEvent(
        stack.github,
        { owner: issue.owner, repo: issue.repo, issue: issue.number },
        "/agent-fix status",
        { login: "outsider" },
      );
      expect(await stack.send(ask.event, ask.payload)).toBeLessThan(300);
      const [running] = repliesTo("outsider", issue.number);
      expect(running).toContain("is running");
      expect(running).toContain("Opening the pull request");
      expect(ownChecks()).toEqual([]); // nothing pushed yet
      held.release();
      const final = await waitFor("the run to finish", () => stack.finalStatus(issue), 240_000);
      expect(final.body).toContain("opened draft pull request #");

      // One check run, on the commit pushed, completed with the gate's account, linking the run's page.
      const head = await branchHead(stack, issue);
      const [check] = ownChecks();
      expect(ownChecks()).toHaveLength(1);
      expect(check).toMatchObject({ headSha: head, status: "completed", conclusion: "success" });
      expect(check?.output.title).toContain("Tests pass with the change");
      expect(check?.output.summary).toContain("**Before the change** (the base commit): passed");
      expect(check?.output.summary).toContain("**With the change**: passed");
      expect(check?.output.summary).toContain("**Proof**: the changed test files (`tests/test_stats.py`)");
      expect(check?.output.summary).toContain("fail before, pass after");
      expect(check?.detailsUrl).toMatch(new RegExp(`^${stack.app!.url}/trajectories/.+\\.traj\\?expires=`));

      // Review from the code owners of the changed files, not from who labelled it; who could not be, named.
      const [pr] = stack.pulls(issue);
      expect(pr?.reviewRequests).toEqual(["owner-a"]);
      expect(final.body).toContain("Review requested from @owner-a.");
      expect(final.body).toContain("Review could not be requested from @stranger (.github/CODEOWNERS)");
      expect(final.body).toContain("Review could not be requested from owners@example.com");

      // With no run any more, status says so and how to start one; help lists the commands.
      const none = commentEvent(
        stack.github,
        { owner: issue.owner, repo: issue.repo, issue: issue.number },
        "/agent-fix status",
        { login: "outsider" },
      );
      await waitFor("the issue job to complete", async () =>
        (await stack.app!.queue.queue.getJobState(fixJobId(issue.repoId, issue.number))) === "completed"
          ? true
          : undefined,
      );
      expect(await stack.send(none.event, none.payload)).toBeLessThan(300);
      expect(repliesTo("outsider", issue.number)[1]).toContain("No agent-fix run is queued or running");
    }, 540_000);

    it.sequential("a review round's new commit gets a check run of its own", async ({ expect }) => {
      const first = await branchHead(stack, issue);
      const { answered } = await requestChanges(stack, issue, {
        replay,
        body: "Good fix, one thing before it can go in.",
        comment: "Say in a comment why the two middle values are averaged.",
      });
      expect(answered).toBeLessThan(300);
      await reviewRunPushed(stack, issue, first, 240_000);
      const second = await branchHead(stack, issue);
      expect(ownChecks().map((c) => [c.headSha, c.status, c.conclusion])).toEqual([
        [first, "completed", "success"],
        [second, "completed", "success"],
      ]);
    }, 300_000);

    it.sequential("an installation that never granted checks: write -> the pull request opens, the check run's absence named", async ({
      expect,
    }) => {
      await waitFor("the review job to complete", async () =>
        (await stack.app!.queue.queue.getJobState(fixJobId(issue.repoId, issue.number))) === "completed"
          ? true
          : undefined,
      );
      // An installation from before the app asked for checks: write.
      stack.github.setInstallationPermissions(issue.installationId, {
        contents: "write",
        issues: "write",
        pull_requests: "write",
      });
      await copyFile(SAMPLE_REPLAY, replay);
      const other = stack.addIssue({
        owner: issue.owner,
        name: issue.repo,
        id: issue.repoId,
        installationId: issue.installationId,
      });
      const before = ownChecks().length;
      expect(await stack.label(other)).toBeLessThan(300);
      const final = await waitFor("the run to finish", () => stack.finalStatus(other), 240_000);
      expect(final.body).toContain("opened draft pull request #");
      expect(final.body).toContain(
        `The check run "${CHECK_RUN_NAME}" could not be created: The permissions requested are not granted to this installation. (an owner of the installation can accept the app's request for the checks: write permission in its settings)`,
      );
      expect(ownChecks()).toHaveLength(before);
    }, 300_000);
  });

  describe("another issue", () => {
    // An installation other than the first stack's (see StackOptions.installationId).
    const stack = new Stack({ model: `replay:${SAMPLE_REPLAY}`, installationId: 2 });
    const ownChecks = () => stack.github.ci.checkRuns.filter((run) => run.name === CHECK_RUN_NAME);
    beforeAll(() => stack.start());
    afterAll(() => stack.stop());

    it("the label removed once the check run exists -> no pull request, the check run completed as cancelled, saying what to do", async ({
      expect,
    }) => {
      const repo = await stack.addSampleRepo("textstats-cancelled");
      const cancelled = stack.addIssue(repo);
      const onRepo = () => ownChecks().filter((c) => c.repo === repo.name);
      // GitHub creates the check run; its answer reaches the worker only once the label is gone.
      const held = stack.github.holdAnswer("POST", new RegExp(`^/repos/octo/${repo.name}/check-runs$`));
      expect(await stack.label(cancelled)).toBeLessThan(300);
      await waitFor("the check run to be created", () => held.arrived.then(() => true), 240_000);
      expect(onRepo().map((c) => c.status)).toEqual(["in_progress"]);
      expect(await stack.unlabel(cancelled)).toBeLessThan(300);
      held.release();
      const final = await waitFor("the run to end", () => stack.finalStatus(cancelled), 120_000);
      expect(final.body).toContain("run cancelled by @maintainer");
      expect(stack.pulls(cancelled)).toEqual([]);
      const [check] = onRepo();
      expect(onRepo()).toHaveLength(1);
      expect(check).toMatchObject({ status: "completed", conclusion: "cancelled" });
      expect(check?.output.title).toBe("The run was cancelled");
      expect(check?.output.summary).toContain("cancelled by maintainer after it pushed this commit");
      expect(check?.output.summary).toContain("add the `agent-fix` label to the issue again");
    }, 300_000);
  });
});
