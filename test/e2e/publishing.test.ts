import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleFixReplies, stackWithModelStandIn } from "../support/model-stack.js";
import type { OpenAIStandIn } from "../support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker; the stand-in answers as GitHub documents.
const ready = (await requireRedis()) && (await requireSandboxImage());

// The runs go side by side, each on a repository of its own (two at once: the installation's default
// limit): most of a run here is waiting, on Octokit's and the job's retries.
describe.runIf(ready).concurrent("publishing survives GitHub, and the status never misleads", () => {
  // Repositories whose config names no model use the operator's (openai:gpt-4.1) at this stand-in.
  // A retried job waits 2 s, not the production 30 s: the faults these tests inject are over by then.
  const env = { AGENT_FIX_JOB_BACKOFF_SECONDS: "2", AGENT_FIX_CONCURRENCY: "6" };
  const { stack, start, stop } = stackWithModelStandIn({ env });
  let model: OpenAIStandIn;
  const jobId = (issue: IssueRef) => `fix-${issue.repoId}-${issue.number}`;
  const issueIn = async (name: string) =>
    stack.addIssue(await stack.addSampleRepo(name, sampleConfig("sample-median.jsonl")));
  /** The last status comment of the issue once final (a new one is posted when the first cannot be edited). */
  const lastFinalStatus = (issue: IssueRef) =>
    stack.github.state
      .commentsOn(issue.owner, issue.repo, issue.number)
      .filter((c) => c.body.includes("<!-- agent-fix:status -->"))
      .at(-1)
      ?.body.match(/^(?![\s\S]*⏳)[\s\S]*$/)?.[0];
  /** The job once completed (read again after: a job read before it completed holds its old counts). */
  const completedJob = async (issue: IssueRef) => {
    const queue = stack.app!.queue.queue;
    await waitFor("the job to complete", async () => (await queue.getJobState(jobId(issue))) === "completed");
    return (await queue.getJob(jobId(issue)))!;
  };
  /** The job ran (and so paid for the model) once, and completed. */
  const ranOnce = async (issue: IssueRef) => {
    expect((await completedJob(issue)).attemptsMade).toBe(1);
  };

  beforeAll(async () => {
    model = await start();
  });
  afterAll(stop);

  it("a private repository on the Free plan gets a ready pull request saying why it is not a draft", async () => {
    const issue = await issueIn("free-plan");
    stack.github.state.repo(issue.owner, issue.repo)!.plan = "free";
    await stack.label(issue);
    const status = await waitFor("a final status", () => lastFinalStatus(issue), 240_000);
    const [pr] = stack.pulls(issue);
    expect(pr).toMatchObject({ draft: false, state: "open" });
    expect(pr!.body).toMatch(
      /^> \[!NOTE\]\n> \*\*Not a draft:\*\* GitHub does not support draft pull requests/,
    );
    expect(status).toContain(`✅ **agent-fix** opened pull request #${pr!.number}`);
    expect(status).toContain("It is not a draft");
    // The commit is the app's on GitHub: the noreply address of its bot user (by id) on this host.
    const email = execFileSync(
      "git",
      ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), "log", "-1", "--format=%ae|%ce", pr!.head],
      { encoding: "utf8" },
    ).trim();
    const address = `${stack.github.bot.id}+agent-fix-e2e[bot]@users.noreply.127.0.0.1`;
    expect(email).toBe(`${address}|${address}`);
    await ranOnce(issue);
  }, 300_000);

  it("a summary GitHub refuses with 5xx after retries: the status names the pull request and what did not work", async () => {
    const issue = await issueIn("summary-fails");
    const pullNumber = issue.number + 1;
    stack.github.failAlways(
      "POST",
      new RegExp(`^/repos/${issue.owner}/${issue.repo}/issues/${pullNumber}/comments$`),
      502,
      {
        message: "Server Error",
      },
    );
    await stack.label(issue);
    const status = await waitFor("a final status", () => lastFinalStatus(issue), 240_000);
    expect(status).toContain(`opened draft pull request #${pullNumber}`);
    expect(status).not.toContain("stopped without a pull request");
    expect(status).toContain(
      "- The trajectory summary could not be posted on the pull request: Server Error",
    );
    // Octokit retried the summary before it was given up.
    const posts = stack.github.state.requests.filter(
      (r) =>
        r.method === "POST" && r.path === `/repos/${issue.owner}/${issue.repo}/issues/${pullNumber}/comments`,
    );
    expect(posts.length).toBeGreaterThan(1);
    await ranOnce(issue);
  }, 300_000);

  it("a status comment that cannot be edited (403 on every edit) gets a new final comment; the run completes", async () => {
    const issue = await issueIn("frozen-status");
    stack.github.failAlways(
      "PATCH",
      new RegExp(`^/repos/${issue.owner}/${issue.repo}/issues/comments/\\d+$`),
      403,
      {
        message: "Resource not accessible by integration",
        documentation_url: "https://docs.github.com/rest/issues/comments#update-an-issue-comment",
        status: "403",
      },
    );
    await stack.label(issue);
    const status = await waitFor("a final status", () => lastFinalStatus(issue), 240_000);
    const [pr] = stack.pulls(issue);
    expect(status).toContain(`opened draft pull request #${pr!.number}`);
    const statuses = stack.github.state
      .commentsOn(issue.owner, issue.repo, issue.number)
      .filter((c) => c.body.includes("<!-- agent-fix:status -->"));
    expect(statuses).toHaveLength(2);
    await ranOnce(issue);
  }, 300_000);

  it("a push a ruleset refuses is reported with GitHub's reason, not as someone else's push", async () => {
    const issue = await issueIn("ruleset");
    await stack.github.refusePushes(issue.owner, issue.repo, [
      {
        branches: "agent-fix/*",
        refusal: { kind: "ruleset", rules: ["Changes must be made through a pull request."] },
      },
    ]);
    await stack.label(issue);
    const status = await waitFor("a final status", () => lastFinalStatus(issue), 240_000);
    expect(status).toContain("stopped without a pull request");
    expect(status).toContain(
      "GitHub refused the push to agent-fix/issue-1: push declined due to repository rule violations. GitHub said: error: GH013: Repository rule violations found for refs/heads/agent-fix/issue-1.",
    );
    expect(status).toContain("- Changes must be made through a pull request.");
    expect(status).toContain("add the app to its bypass list");
    expect(stack.pulls(issue)).toEqual([]);
  }, 300_000);

  it("a failure opening the pull request retries only the publishing, never the agent", async () => {
    const issue = await issueIn("pulls-fail");
    // More 500s than Octokit retries: the job's first attempt fails after the push.
    stack.github.failNext("POST", new RegExp(`^/repos/${issue.owner}/${issue.repo}/pulls$`), 500, 4);
    await stack.label(issue);
    await waitFor("a pull request", () => stack.pulls(issue).length > 0, 300_000);
    const status = await waitFor("a final status", () => lastFinalStatus(issue), 60_000);
    expect(status).toContain(`opened draft pull request #${stack.pulls(issue)[0]!.number}`);
    expect((await completedJob(issue)).attemptsMade).toBe(2);
    const creates = stack.github.state.requests.filter(
      (r) => r.method === "POST" && r.path === `/repos/${issue.owner}/${issue.repo}/pulls`,
    );
    expect(creates.map((r) => r.status)).toEqual([500, 500, 500, 500, 201]);
    // The agent's phase began once: the second attempt only published.
    const history = stack.statusComment(issue)!.history;
    const phases = history.map((body) => body.split("\n").find((line) => line.includes("⏳")) ?? "");
    const agentStarts = phases.filter(
      (line, i) => line.includes("**Working on a fix") && !phases[i - 1]?.includes("**Working on a fix"),
    );
    expect(agentStarts).toHaveLength(1);
  }, 360_000);
  it("a push the git server answers 500 retries only the push and the publishing: the model is called for one run", async () => {
    const issue = stack.addIssue(await stack.addSampleRepo("push-fails", sampleConfig(null)));
    const replies = sampleFixReplies();
    model.enqueue(...replies);
    stack.github.pushFaults.failNext(issue.owner, issue.repo, 1, 500);
    await stack.label(issue);
    const status = await waitFor("a final status", () => lastFinalStatus(issue), 300_000);
    const [pr] = stack.pulls(issue);
    expect(status).toContain(`opened draft pull request #${pr!.number}`);
    expect(stack.github.pushFaults.failed).toBe(1);
    // The first attempt's push failed; the second pushed and opened the pull request.
    expect((await completedJob(issue)).attemptsMade).toBe(2);
    const history = stack.statusComment(issue)!.history;
    expect(
      history.some((body) => /Retrying after a transient error: git push failed: .*500/.test(body)),
    ).toBe(true);
    // Every model call was the first attempt's: one run's worth, nothing asked for again.
    expect(model.requests).toHaveLength(replies.length);
    expect(model.remaining()).toBe(0);
    // The tested change was pushed: the fix and its regression test on the branch.
    const show = (path: string) =>
      execFileSync(
        "git",
        ["--git-dir", stack.github.repoDir(issue.owner, issue.repo), "show", `${pr!.head}:${path}`],
        {
          encoding: "utf8",
        },
      );
    expect(show("textstats/stats.py")).toContain("(ordered[middle - 1] + ordered[middle]) / 2");
    expect(show("tests/test_stats.py")).toContain("def test_even_length(self):");
    // The pull request links the trajectory of the run that tested the change (the later attempt wrote none).
    const link = /\[Trajectory\]\((\S+)\)/.exec(pr!.body)?.[1];
    const served = await fetch(`${link!}&format=json`);
    expect(served.status).toBe(200);
    expect(((await served.json()) as { info: { exit_status: string } }).info.exit_status).toBe("submitted");
  }, 360_000);
});
