import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBaseMoveQueue } from "../../src/shared/queue/base-moves.js";
import { fixJobId } from "../../src/shared/queue/index.js";
import { pushAs, pushEvent } from "../support/push-event.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import {
  FIXTURES,
  filesOf,
  type IssueRef,
  SAMPLE_REPLAY,
  SAMPLE_REPO_DIR,
  waitFor,
} from "../support/stack-parts.js";
import { pullCommentEvent } from "../support/webhooks.js";

// Real Redis, real Docker sandboxes, the real app and worker; GitHub is the stand-in (compare, merges,
// `commitAs` for a person's commits), the model the sample's replay.
const ready = (await requireRedis()) && (await requireSandboxImage());
const BOT = "agent-fix-e2e[bot]";

/** git on the stand-in's copy of the issue's repository, and the wait for the issue's job to complete. */
function issueTools(stack: Stack, issueOf: () => IssueRef) {
  const git = (...args: string[]) => {
    const issue = issueOf();
    return execFileSync("git", ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), ...args], {
      encoding: "utf8",
    }).trim();
  };
  const jobDone = () =>
    waitFor("the job to complete", async () => {
      const issue = issueOf();
      return (await stack.app!.queue.queue.getJobState(fixJobId(issue.repoId, issue.number))) === "completed";
    });
  return { git, jobDone };
}

/**
 * What the worker's look at the app's pull requests made of a base push of `sha` (the base-moves job's
 * return value: "off", "mergeable", "round queued", ...), once it has ended.
 */
function lookAfterPush(stack: Stack, sha: string) {
  const baseMoves = createBaseMoveQueue(stack.app!.queue.redis, stack.app!.queue);
  return waitFor(`the look after the push of ${sha.slice(0, 7)}`, async () => {
    const jobs = await baseMoves.getJobs(["completed"]);
    return jobs.find((j) => j.data.baseSha === sha)?.returnvalue as string | undefined;
  }).finally(() => baseMoves.close());
}

/** The looks queued for a base push of `sha`, whatever their state. */
async function looksAt(stack: Stack, sha: string) {
  const baseMoves = createBaseMoveQueue(stack.app!.queue.redis, stack.app!.queue);
  try {
    return (await baseMoves.getJobs()).filter((j) => j.data.baseSha === sha);
  } finally {
    await baseMoves.close();
  }
}

// The file's two stacks share nothing (each its own stand-in, queue prefix and worker, their
// repositories in different installations: StackOptions.installationId), so they run side by side: each
// outer suite is concurrent with the other, and the tests inside each run in order (`sequential`:
// every test builds on the branch the one before left).
describe.runIf(ready).concurrent("keep-up with the default strategy", () => {
  describe.sequential("a person's commits kept, and /agent-fix rebase keeping up with the base", () => {
    const replay = join(tmpdir(), `af-keep-up-replay-${randomUUID()}.jsonl`);
    const stack = new Stack({ model: `replay:${replay}` });
    let issue: IssueRef;
    const { git, jobDone } = issueTools(stack, () => issue);
    const onPull = (pull: number) =>
      stack.github.state.commentsOn(issue.owner, issue.repo, pull).map((c) => c.body);
    const rebase = async (login: string) => {
      const [pr] = stack.pulls(issue);
      const comment = pullCommentEvent(
        stack.github,
        { owner: issue.owner, repo: issue.repo, pull: pr!.number },
        "/agent-fix rebase",
        { login },
      );
      expect(await stack.send(comment.event, comment.payload)).toBeLessThan(300);
      return pr!.number;
    };
    const statusSays = (text: string) =>
      waitFor(`the status to say "${text}"`, () => stack.finalStatus(issue)?.body.includes(text), 240_000);

    beforeAll(async () => {
      await copyFile(SAMPLE_REPLAY, replay);
      await stack.start();
      issue = stack.addIssue(await stack.addSampleRepo("textstats-keep"));
    });
    afterAll(async () => {
      await stack.stop();
      await rm(replay, { force: true });
    });

    it("label again with a maintainer's commit on agent-fix/issue-N -> the commit kept, the agent's change on top, no force", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const target = { owner: issue.owner, repo: issue.repo, branch };
      // An earlier run's commit by the app, then a maintainer's commit on top of it.
      const earlier = await stack.github.commitAs(BOT, target, { "NOTES.md": "From the app.\n" }, "Earlier");
      const persons = await stack.github.commitAs(
        "maintainer",
        target,
        { "CHANGELOG.md": "- median: even counts\n" },
        "A maintainer's note",
      );
      expect(await stack.label(issue)).toBeLessThan(300);
      await waitFor("the run to finish", () => stack.finalStatus(issue), 240_000);
      await jobDone();
      const status = stack.finalStatus(issue)!.body;
      expect(status).toContain("opened draft pull request #");
      expect(status).toContain(`Started from \`${branch}\``);
      expect(status).toContain("commits by @maintainer");

      // The agent's commit is a child of the maintainer's: nothing rewritten.
      expect(git("rev-parse", `${branch}^`)).toBe(persons);
      expect(git("rev-parse", `${branch}^^`)).toBe(earlier);
      expect(git("log", "-1", "--format=%an", branch)).toBe(BOT);
      expect(git("show", `${branch}:CHANGELOG.md`)).toBe("- median: even counts");
      expect(git("show", `${branch}:textstats/stats.py`)).toContain(
        "(ordered[middle - 1] + ordered[middle]) / 2",
      );
    }, 300_000);

    it("/agent-fix rebase with a base that moved cleanly -> GitHub merges it in as the app, no agent, a reply", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      const summariesBefore = stack.github.state
        .commentsOn(issue.owner, issue.repo, stack.pulls(issue)[0]!.number)
        .filter((c) => c.body.includes("<!-- agent-fix:summary -->")).length;
      const main = await stack.github.commitAs(
        "maintainer",
        { owner: issue.owner, repo: issue.repo, branch: "main" },
        { "docs/usage.md": "Call median() with a list of numbers.\n" },
        "Usage notes",
      );
      // Nothing left to replay: a round that ran the agent would fail at its first step.
      await writeFile(replay, "");
      const pull = await rebase("maintainer");
      await statusSays(`merged \`main\` into pull request #${pull}`);
      await jobDone();
      const head = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      // A merge commit of the branch and main, made by GitHub's merge as the app: nothing rewritten.
      expect(git("rev-list", "--parents", "-1", head).split(" ")).toEqual([head, before, main]);
      expect(git("log", "-1", "--format=%an|%s", head)).toBe(`${BOT}|Merge main into ${branch}`);
      expect(git("show", `${head}:docs/usage.md`)).toBe("Call median() with a list of numbers.");
      expect(onPull(pull).filter((b) => b.startsWith("@maintainer"))).toEqual([
        expect.stringContaining(
          `@maintainer I merged \`main\` into \`${branch}\` (${head.slice(0, 7)}). It merged cleanly, so the agent was not run.`,
        ),
      ]);
      // No agent: no trajectory summary, and the status claims no test run.
      expect(onPull(pull).filter((b) => b.includes("<!-- agent-fix:summary -->"))).toHaveLength(
        summariesBefore,
      );
      expect(stack.finalStatus(issue)!.body).not.toContain("tests pass");
    }, 300_000);

    it("/agent-fix rebase when the branch already has its base -> nothing pushed, the reply says so", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      const pull = await rebase("maintainer");
      await statusSays(`found pull request #${pull} already up to date with \`main\``);
      await jobDone();
      expect((await stack.github.branches(issue.owner, issue.repo))[branch]).toBe(before);
      expect(onPull(pull).at(-1)).toBe(
        `@maintainer \`${branch}\` is already up to date with \`main\`: nothing to do.`,
      );
    }, 120_000);

    it("/agent-fix rebase with a conflicting base -> the agent resolves it, the gate passes, one merge commit lands", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      // main adds the CHANGELOG.md the maintainer added on the branch, differently: git cannot merge it.
      const main = await stack.github.commitAs(
        "maintainer",
        { owner: issue.owner, repo: issue.repo, branch: "main" },
        { "CHANGELOG.md": "- mean: a docstring example\n" },
        "Changelog on main",
      );
      await copyFile(join(FIXTURES, "replay", "sample-rebase-conflict.jsonl"), replay);
      const pull = await rebase("maintainer");
      await statusSays(
        `resolved the conflicts with its base branch in a merge commit on pull request #${pull}`,
      );
      await jobDone();
      expect(stack.finalStatus(issue)!.body).toContain("The repository's tests pass on the result.");
      const head = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      expect(git("rev-list", "--parents", "-1", head).split(" ")).toEqual([head, before, main]);
      expect(git("log", "-1", "--format=%an|%s", head)).toBe(`${BOT}|Merge main into ${branch}`);
      expect(git("show", `${head}:CHANGELOG.md`)).toBe("- mean: a docstring example\n- median: even counts");
      // The rest of both sides is kept: the branch's fix and main's usage notes.
      expect(git("show", `${head}:textstats/stats.py`)).toContain(
        "(ordered[middle - 1] + ordered[middle]) / 2",
      );
      expect(git("show", `${head}:docs/usage.md`)).toBe("Call median() with a list of numbers.");
      const reply = onPull(pull).find(
        (b) => b.startsWith("@maintainer I merged `main`") && b.includes("conflicted"),
      );
      expect(reply).toContain("the agent resolved the conflicts");
      expect(reply).toContain("CHANGELOG.md keeps both entries");
    }, 300_000);

    it("a conflict in the code: the tests fail on the markers, the round goes on, the agent resolves it, the gate passes", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      const stats = git("show", "main:textstats/stats.py");
      // main changes the line the branch's fix replaced: git cannot merge textstats/stats.py.
      const main = await stack.github.commitAs(
        "maintainer",
        { owner: issue.owner, repo: issue.repo, branch: "main" },
        {
          "textstats/stats.py": stats.replace(
            "    return ordered[middle]",
            "    return ordered[middle]  # the upper middle value",
          ),
        },
        "Say which middle value",
      );
      await copyFile(join(FIXTURES, "replay", "sample-rebase-keep-ours.jsonl"), replay);
      const pull = await rebase("maintainer");
      await statusSays(
        `resolved the conflicts with its base branch in a merge commit on pull request #${pull}`,
      );
      await jobDone();
      const head = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      expect(git("rev-list", "--parents", "-1", head).split(" ")).toEqual([head, before, main]);
      const merged = git("show", `${head}:textstats/stats.py`);
      expect(merged).toContain("(ordered[middle - 1] + ordered[middle]) / 2");
      expect(merged).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/m);
      // The round's tests ran on the markers first (a syntax error) and on the resolved merge after.
      const summaries = onPull(pull).filter((b) => b.includes("<!-- agent-fix:summary -->"));
      const link = /\[Full trajectory\]\((\S+)\)/.exec(summaries.at(-1)!)?.[1];
      const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as {
        history: { role: string; content: string }[];
      };
      const task = trajectory.history.find((m) => m.role === "user")?.content ?? "";
      expect(task).toContain("Conflicted files:\n- `textstats/stats.py`");
    }, 300_000);

    it("/agent-fix rebase from someone without write access -> refused once, nothing run", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      const status = stack.statusComment(issue)!.body;
      const pull = await rebase("outsider");
      const refusals = () => onPull(pull).filter((b) => b.startsWith("@outsider"));
      await waitFor("the refusal", () => refusals().length > 0);
      expect(refusals()).toEqual([expect.stringContaining("only people with write access")]);
      expect((await stack.github.branches(issue.owner, issue.repo))[branch]).toBe(before);
      expect(stack.statusComment(issue)!.body).toBe(status);
    }, 60_000);

    it("worker.keepUp.whenConflicting off: a base push that makes the pull request conflict -> nothing", async () => {
      const branch = `agent-fix/issue-${issue.number}`;
      const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
      const pull = stack.pulls(issue)[0]!.number;
      const comments = onPull(pull).length;
      const status = stack.statusComment(issue)!.body;
      // main rewrites the CHANGELOG.md line the branch holds: the pull request conflicts.
      const main = await pushAs(
        stack,
        "maintainer",
        { owner: issue.owner, repo: issue.repo, branch: "main" },
        { "CHANGELOG.md": "- mean: an example in the docstring\n" },
      );
      expect(await lookAfterPush(stack, main)).toBe("off");
      expect((await stack.github.branches(issue.owner, issue.repo))[branch]).toBe(before);
      expect(onPull(pull)).toHaveLength(comments);
      expect(stack.statusComment(issue)!.body).toBe(status);
    }, 60_000);
  });
});

// One stack for the rest: the operator chose both (they do not interfere: a repository each, and the
// rebase strategy's rounds are asked for). Each test puts the replay its runs need in place.
describe.runIf(ready).concurrent("keep-up with the operator's choices", () => {
  describe.sequential("worker.keepUp: strategy rebase, whenConflicting", () => {
    const replay = join(tmpdir(), `af-rebase-replay-${randomUUID()}.jsonl`);
    const stack = new Stack({
      model: `replay:${replay}`,
      workerTuning: { keepUp: { strategy: "rebase", whenConflicting: true } },
      installationId: 2,
    });
    beforeAll(async () => {
      await copyFile(SAMPLE_REPLAY, replay);
      await stack.start();
    });
    afterAll(async () => {
      await stack.stop();
      await rm(replay, { force: true });
    });

    describe("/agent-fix rebase when the operator chose rebase (worker.keepUp.strategy)", () => {
      let issue: IssueRef;
      const { git, jobDone } = issueTools(stack, () => issue);
      const mainMoves = (path: string, text: string) =>
        stack.github.commitAs(
          "maintainer",
          { owner: issue.owner, repo: issue.repo, branch: "main" },
          { [path]: text },
          `Add ${path}`,
        );
      const rebase = async () => {
        const [pr] = stack.pulls(issue);
        const comment = pullCommentEvent(
          stack.github,
          { owner: issue.owner, repo: issue.repo, pull: pr!.number },
          "/agent-fix rebase",
          { login: "maintainer" },
        );
        expect(await stack.send(comment.event, comment.payload)).toBeLessThan(300);
        return pr!.number;
      };

      beforeAll(async () => {
        issue = stack.addIssue(await stack.addSampleRepo("textstats-rebase"));
        // The app's pull request as its run leaves it (runs are covered above; this saves one): the fix
        // committed by the app on agent-fix/issue-N and a draft opened by the app. Every commit is the app's.
        const branch = `agent-fix/issue-${issue.number}`;
        const stats = git("show", "main:textstats/stats.py");
        const fixed = stats.replace(
          "    return ordered[middle]",
          "    if len(ordered) % 2 == 0:\n        return (ordered[middle - 1] + ordered[middle]) / 2\n    return ordered[middle]",
        );
        await stack.github.commitAs(
          BOT,
          { owner: issue.owner, repo: issue.repo, branch, from: "main" },
          { "textstats/stats.py": fixed },
          issue.title,
        );
        stack.github.state.pulls.push({
          owner: issue.owner,
          repo: issue.repo,
          number: stack.github.state.nextNumber(issue.owner, issue.repo),
          title: issue.title,
          body: `Fixes #${issue.number}`,
          head: branch,
          base: "main",
          draft: true,
          state: "open",
          user: stack.github.bot,
          reviewRequests: [],
        });
      });

      it("only the app's commits on the branch -> rebased onto the moved base and force-pushed", async () => {
        const branch = `agent-fix/issue-${issue.number}`;
        const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
        const main = await mainMoves("docs/usage.md", "Call median() with a list of numbers.\n");
        const pull = await rebase();
        await waitFor(
          "the rebase",
          () => stack.finalStatus(issue)?.body.includes(`rebased pull request #${pull} onto \`main\``),
          120_000,
        );
        await jobDone();
        const head = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
        // The app's one commit replayed on main: same change, same author, a new commit whose parent is main.
        expect(git("rev-list", "--parents", "-1", head).split(" ")).toEqual([head, main]);
        expect(head).not.toBe(before);
        expect(git("log", "-1", "--format=%an|%cn", head)).toBe(`${BOT}|${BOT}`);
        expect(git("diff", "--name-only", `${head}^..${head}`)).toBe(
          git("diff", "--name-only", `${before}^..${before}`),
        );
        const replies = stack.github.state.commentsOn(issue.owner, issue.repo, pull).map((c) => c.body);
        expect(replies).toContainEqual(
          expect.stringContaining(
            `@maintainer I rebased \`${branch}\` onto \`main\` (${head.slice(0, 7)}) and force-pushed it`,
          ),
        );
      }, 180_000);

      it("only the app's commits and a conflicting base -> the change replayed on the base, the agent resolves it, linear history", async () => {
        const branch = `agent-fix/issue-${issue.number}`;
        const before = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
        const stats = git("show", "main:textstats/stats.py");
        // main changes the line the branch's fix replaced: git cannot replay the fix on it.
        const main = await mainMoves(
          "textstats/stats.py",
          stats.replace("    return ordered[middle]", "    return ordered[middle]  # the upper middle value"),
        );
        await copyFile(join(FIXTURES, "replay", "sample-replay-keep-branch.jsonl"), replay);
        const pull = await rebase();
        await waitFor(
          "the replay",
          () =>
            stack
              .finalStatus(issue)
              ?.body.includes(
                `resolved the conflicts with its base branch and rebased pull request #${pull} onto it`,
              ),
          240_000,
        );
        await jobDone();
        const head = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
        // One commit of the app's whose only parent is main: no merge commit, the old head replaced.
        expect(git("rev-list", "--parents", "-1", head).split(" ")).toEqual([head, main]);
        expect(head).not.toBe(before);
        expect(git("rev-list", "--count", `${main}..${head}`)).toBe("1");
        expect(git("log", "-1", "--format=%an|%s", head)).toBe(`${BOT}|${issue.title}`);
        const replayed = git("show", `${head}:textstats/stats.py`);
        expect(replayed).toContain("(ordered[middle - 1] + ordered[middle]) / 2");
        expect(replayed).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/m);
        const reply = stack.github.state
          .commentsOn(issue.owner, issue.repo, pull)
          .map((c) => c.body)
          .find((b) => b.startsWith(`@maintainer I rebased \`${branch}\``) && b.includes("It conflicted"));
        expect(reply).toContain("the branch's change replayed as one commit on `main`");
      }, 300_000);

      it("a person's commit on the branch -> merged instead, never rewritten, and the reply says why", async () => {
        const branch = `agent-fix/issue-${issue.number}`;
        const persons = await stack.github.commitAs(
          "maintainer",
          { owner: issue.owner, repo: issue.repo, branch },
          { "CHANGELOG.md": "- median: even counts\n" },
        );
        const main = await mainMoves("docs/more.md", "More notes.\n");
        const pull = await rebase();
        await waitFor(
          "the merge",
          () => stack.finalStatus(issue)?.body.includes(`merged \`main\` into pull request #${pull}`),
          120_000,
        );
        await jobDone();
        const head = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
        expect(git("rev-list", "--parents", "-1", head).split(" ")).toEqual([head, persons, main]);
        const reply = stack.github.state
          .commentsOn(issue.owner, issue.repo, pull)
          .map((c) => c.body)
          .find((b) => b.startsWith("@maintainer I merged"));
        expect(reply).toContain(
          "A rebase would rewrite commits by @maintainer, so `main` was merged in instead.",
        );
      }, 180_000);
    });

    describe("a pull request GitHub reports conflicting, resolved by itself (worker.keepUp.whenConflicting)", () => {
      let issue: IssueRef;
      const branch = () => `agent-fix/issue-${issue.number}`;
      const onMain = () => ({ owner: issue.owner, repo: issue.repo, branch: "main" });
      const onPull = () =>
        stack.github.state
          .commentsOn(issue.owner, issue.repo, stack.pulls(issue)[0]!.number)
          .map((c) => c.body);
      const { git, jobDone } = issueTools(stack, () => issue);

      beforeAll(async () => {
        // One replay serves every run here: it drops any conflict markers in README.md and writes CHANGELOG.md.
        await copyFile(join(FIXTURES, "replay", "sample-conflict-markers.jsonl"), replay);
        issue = stack.addIssue(await stack.addSampleRepo("textstats-dirty"));
      });

      it("a run leaves its pull request conflicting -> a rebase round by itself, the agent resolves it", async () => {
        const branch = `agent-fix/issue-${issue.number}`;
        const readme = "README.md";
        const original = (await filesOf(SAMPLE_REPO_DIR))[readme]!;
        // A maintainer's commit on the branch and main's own change to the same line: they conflict.
        const persons = await stack.github.commitAs(
          "maintainer",
          { owner: issue.owner, repo: issue.repo, branch },
          { [readme]: original.replace("Small statistics helpers", "Small statistics helpers (branch)") },
        );
        const main = await stack.github.commitAs(
          "maintainer",
          { owner: issue.owner, repo: issue.repo, branch: "main" },
          { [readme]: original.replace("Small statistics helpers", "Small statistics helpers (main)") },
        );
        expect(await stack.label(issue)).toBeLessThan(300);
        await waitFor(
          "the rebase round to resolve the conflict",
          () => stack.finalStatus(issue)?.body.includes("resolved the conflicts with its base branch"),
          300_000,
        );
        const head = (await stack.github.branches(issue.owner, issue.repo))[branch]!;
        // The issue run's commit on the maintainer's, then the merge of main resolving the conflict.
        const [, first, second] = git("rev-list", "--parents", "-1", head).split(" ");
        expect(second).toBe(main);
        expect(git("rev-parse", `${first}^`)).toBe(persons);
        const merged = git("show", `${head}:${readme}`);
        expect(merged).toContain("Small statistics helpers (branch)");
        expect(merged).toContain("Small statistics helpers (main)");
        expect(merged).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/m);
        const [pr] = stack.pulls(issue);
        const replies = stack.github.state.commentsOn(issue.owner, issue.repo, pr!.number).map((c) => c.body);
        expect(replies).toContainEqual(expect.stringContaining("@maintainer I merged `main` into"));
        await jobDone();
      }, 400_000);

      it("a base push that leaves the pull request mergeable -> looked at, nothing done", async () => {
        const before = (await stack.github.branches(issue.owner, issue.repo))[branch()]!;
        const comments = onPull().length;
        const main = await pushAs(stack, "maintainer", onMain(), { "docs/usage.md": "Call median().\n" });
        // GitHub answers `mergeable: null` first after the push: the look is retried until it has computed it.
        expect(await lookAfterPush(stack, main)).toBe("mergeable");
        expect((await stack.github.branches(issue.owner, issue.repo))[branch()]).toBe(before);
        expect(onPull()).toHaveLength(comments);
        expect(await stack.app!.queue.queue.getJobState(fixJobId(issue.repoId, issue.number))).toBe(
          "completed",
        );
      }, 60_000);

      it("a push to a branch only a person's pull request targets -> nothing queued", async () => {
        // A person's pull request into `feature`, from a branch named as the app names its own: not the app's.
        await stack.github.commitAs(
          "maintainer",
          { ...onMain(), branch: "agent-fix/issue-77", from: "main" },
          {
            "docs/by-hand.md": "By hand.\n",
          },
        );
        stack.github.state.pulls.push({
          owner: issue.owner,
          repo: issue.repo,
          number: stack.github.state.nextNumber(issue.owner, issue.repo),
          title: "By hand",
          body: "",
          head: "agent-fix/issue-77",
          base: "feature",
          draft: false,
          state: "open",
          user: { login: "maintainer", id: 100_010, type: "User" },
          reviewRequests: [],
        });
        const feature = await pushAs(
          stack,
          "maintainer",
          { owner: issue.owner, repo: issue.repo, branch: "feature", from: "main" },
          { "docs/feature.md": "A feature.\n" },
        );
        // The webhook is answered once its handler has run: the look would be queued by now.
        expect(await looksAt(stack, feature)).toEqual([]);
        const more = await pushAs(
          stack,
          "maintainer",
          { owner: issue.owner, repo: issue.repo, branch: "feature" },
          { "docs/feature.md": "A feature, and more.\n" },
        );
        expect(await looksAt(stack, more)).toEqual([]);
      }, 60_000);

      it("a base push that makes the pull request conflict -> a rebase round by itself, a new commit and a reply", async () => {
        const before = (await stack.github.branches(issue.owner, issue.repo))[branch()]!;
        // main adds its own CHANGELOG.md beside the one the branch added: git cannot merge them.
        const main = await pushAs(stack, "maintainer", onMain(), { "CHANGELOG.md": "- mean: from main\n" });
        expect(await lookAfterPush(stack, main)).toBe("round queued");
        const reply = await waitFor(
          "the round's reply",
          () =>
            onPull().find((b) =>
              b.startsWith("`main` moved and GitHub reported this pull request conflicting"),
            ),
          300_000,
        );
        await jobDone();
        expect(reply).toContain(
          `I merged \`main\` into \`${branch()}\`. It conflicted: the agent resolved the conflicts`,
        );
        // Nobody asked: nobody is addressed. A maintainer's commit is on the branch, so the operator's
        // rebase merges instead, and says why.
        expect(reply.split("\n")[0]).not.toMatch(/@\w/);
        expect(reply).toContain(
          "A rebase would rewrite commits by @maintainer, so `main` was merged in instead.",
        );
        const head = (await stack.github.branches(issue.owner, issue.repo))[branch()]!;
        expect(git("rev-list", "--parents", "-1", head).split(" ")).toEqual([head, before, main]);
        expect(git("log", "-1", "--format=%an", head)).toBe(BOT);
        expect(git("show", `${head}:CHANGELOG.md`)).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/m);
        // The same base commit pushed again (another push event of it) looks no more: one look per pull
        // request and base commit.
        const again = await pushEvent(
          stack.github,
          { ...onMain(), before: git("rev-parse", `${main}^`), after: main },
          "other",
        );
        expect(await stack.send(again.event, again.payload)).toBeLessThan(300);
        expect(await looksAt(stack, main)).toHaveLength(1);
      }, 400_000);
    });
  });
});
