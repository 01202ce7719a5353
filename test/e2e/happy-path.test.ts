import { execFileSync } from "node:child_process";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STANDBY_JOB } from "../../sandbox/docker/standby.js";
import { metrics } from "../../src/shared/metrics/registry.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker; GitHub is the stand-in, the model a replay.
const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("label an issue, get a tested draft pull request", () => {
  // Production's standbys (the harness turns shared-image standbys off elsewhere: a taken standby keeps
  // its `standby` job label, and other files find a run's sandboxes by its job id).
  const stack = new Stack({ workerTuning: { standby: { sharedImages: true } } });
  const standbyStarts = async () =>
    (await metrics.sandboxStarts.get()).values
      .filter((v) => v.labels.from === "standby")
      .reduce((sum, v) => sum + v.value, 0);
  let issue: IssueRef;

  beforeAll(async () => {
    await stack.start();
    const repo = await stack.addSampleRepo();
    issue = stack.addIssue(repo);
  });
  afterAll(() => stack.stop());

  it("opens one draft PR with the fix, the proof, the app as author, a review request and the summary", async () => {
    const standbysBefore = await standbyStarts();
    expect(await stack.label(issue)).toBeLessThan(300);
    const status = await waitFor(
      "the status comment to reach a final state",
      () => stack.finalStatus(issue),
      240_000,
    );
    expect(status.body).toContain("opened draft pull request #");

    const pulls = stack.pulls(issue);
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr).toMatchObject({
      head: "agent-fix/issue-1",
      base: "main",
      draft: true,
      state: "open",
      title: issue.title,
    });
    expect(pr.body).toContain("Fixes #1");
    // The description the model gave as such, not its reply to the review checklist (issue 24).
    expect(pr.body.startsWith("## What was wrong\nmedian() returned the upper")).toBe(true);
    expect(pr.body).toContain("It now returns their mean");
    expect(pr.body).not.toContain("Checklist:");
    expect(pr.body).toContain("`tests/test_stats.py`");
    expect(pr.body).toMatch(/❌ failed \| ✅ passed/);
    // The regression test was added beside the old ones: no warning, the test named (issue 24).
    expect(pr.body).not.toContain("Changes to existing tests");
    expect(pr.body).toContain("Tests added: `test_even_length (tests/test_stats.py)`.");
    expect(pr.reviewRequests).toEqual(["maintainer"]);
    expect(status.body).toContain(`#${pr.number}`);

    // The trajectory summary on the pull request.
    const summary = stack.github.state.commentsOn(issue.owner, issue.repo, pr.number);
    expect(summary).toHaveLength(1);
    expect(summary[0]!.body).toContain("<!-- agent-fix:summary -->");
    expect(summary[0]!.body).toContain("submit");

    // The full trajectory, linked from the summary and served by the app; the link is signed.
    const link = /\[Full trajectory\]\((\S+)\)/.exec(summary[0]!.body)?.[1];
    expect(link).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/trajectories\/octo-textstats-1-\d+\.traj\?expires=\d+&sig=/,
    );
    // The run's page, read from Redis where the worker stored it; the raw trajectory beside it.
    const page = await fetch(link!);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await page.text()).toContain("Submitted change");
    const served = await fetch(`${link!}&format=json`);
    expect(served.status).toBe(200);
    const trajectory = (await served.json()) as {
      info: { exit_status: string };
      history: { content: string | null }[];
    };
    expect(trajectory.info.exit_status).toBe("submitted");
    // The agent was told the command the gate runs: the repository's test.command (issue 12).
    expect(trajectory.history[1]!.content).toContain(
      "Your change will be checked with: `python3 -m unittest discover -s tests`",
    );
    expect(
      (await fetch(link!.replace(/sig=(.)/, (_, c: string) => `sig=${c === "0" ? "1" : "0"}`))).status,
    ).toBe(404);

    // The pushed commit: authored by the app, issue title and Fixes #1, the fix itself; main untouched.
    const bare = stack.github.repoDir(issue.owner, issue.repo);
    const git = (...args: string[]) =>
      execFileSync("git", ["--git-dir", bare, ...args], { encoding: "utf8" });
    expect(git("log", "-1", "--format=%an|%cn|%s|%b", "agent-fix/issue-1").trim()).toBe(
      `agent-fix-e2e[bot]|agent-fix-e2e[bot]|${issue.title}|Fixes #1`,
    );
    expect(git("show", "agent-fix/issue-1:textstats/stats.py")).toContain(
      "(ordered[middle - 1] + ordered[middle]) / 2",
    );
    expect(git("rev-list", "--count", "main").trim()).toBe("1");
    expect(git("diff", "--name-only", "main..agent-fix/issue-1").trim().split("\n")).toEqual([
      "tests/test_stats.py",
      "textstats/stats.py",
    ]);

    // What people saw on the issue: eyes at once, the status moving through the steps, then final.
    expect(
      stack.github.state.reactions.some((r) => r.issueNumber === issue.number && r.content === "eyes"),
    ).toBe(true);
    // Each step was shown as the current one (marked ⏳) at some point, in order.
    const current = status.history.map((body) => body.split("\n").find((line) => line.includes("⏳")) ?? "");
    const order = ["Queued", "Cloning", "Setting up", "Working on a fix", "Opening the pull"].map((label) =>
      current.findIndex((line) => line.includes(`**${label}`)),
    );
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(stack.github.state.commentsOn(issue.owner, issue.repo, issue.number)).toHaveLength(1);

    // Standbys served the run's later sandboxes (the baseline's, the gate's, the proof's: up to three of
    // a kind are started ahead as the first of that kind starts), and no sandbox is left behind: what
    // remains are idle standbys, at most the default cap of three (a taken one goes with its run, once
    // the status says done).
    expect(await standbyStarts()).toBeGreaterThan(standbysBefore);
    const idle = (c: Docker.ContainerInfo) =>
      c.Labels["agent-fix.job"] === STANDBY_JOB && c.State === "running";
    const left = await waitFor("the run's sandboxes to go", async () => {
      const containers = await stack.containers();
      return containers.every(idle) && containers;
    });
    expect(left.length).toBeLessThanOrEqual(3);
  });

  it("a retrigger force-pushes the same branch and updates the same pull request, never a second", async () => {
    const before = (await stack.github.branches(issue.owner, issue.repo))["agent-fix/issue-1"];
    const firstStatus = stack.statusComment(issue)!;
    // The status turns final just before the job leaves the active state; a start in between is a duplicate.
    const jobId = `fix-${issue.repoId}-${issue.number}`;
    await waitFor(
      "the first job to complete",
      async () => (await stack.app!.queue.queue.getJobState(jobId)) === "completed",
    );
    await stack.unlabel(issue);
    expect(await stack.label(issue, "maintainer")).toBeLessThan(300);
    await waitFor(
      "the second run to finish",
      async () =>
        stack.finalStatus(issue) &&
        (await stack.github.branches(issue.owner, issue.repo))["agent-fix/issue-1"] !== before,
      120_000,
    );
    expect(stack.finalStatus(issue)?.body).toContain("opened draft pull request");
    expect(stack.pulls(issue)).toHaveLength(1);
    // One status comment per issue, reused; a second summary on the same pull request.
    expect(stack.statusComment(issue)?.id).toBe(firstStatus.id);
    expect(
      stack.github.state.commentsOn(issue.owner, issue.repo, stack.pulls(issue)[0]!.number),
    ).toHaveLength(2);
  }, 180_000);
});
