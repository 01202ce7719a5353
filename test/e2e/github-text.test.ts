import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixJobId } from "../../src/shared/queue/index.js";
import { TOKEN_PERMISSIONS } from "../../worker/run/open/installation-auth.js";
import { liveClosingReferences, liveMentions, liveOutsideUrls } from "../support/github/live-text.js";
import type { RequestRecord } from "../support/github-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { type SampleRepo, Stack, sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker; GitHub is the stand-in, the model a replay
// that writes what a prompt-injected model would (mentions, closing keywords) and weakens the tests.
const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("what the app writes on GitHub, and with which tokens", () => {
  // Trajectory links of this stack expire after 2 days instead of the default 7.
  const stack = new Stack({ model: null, env: { AGENT_FIX_TRAJECTORY_LINK_DAYS: "2" } });
  const DAY_MS = 24 * 60 * 60 * 1000;
  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  /** Runs the labelled issue to its final status; returns the installation requests the worker made. */
  async function runIssue(
    repo: SampleRepo,
    text?: { title: string; body: string },
  ): Promise<{ issue: IssueRef; requests: RequestRecord[] }> {
    const issue = stack.addIssue(repo, ...(text ? [text] : []));
    expect(await stack.label(issue)).toBeLessThan(300);
    // The webhook server is done once the label was answered: later requests are the worker's.
    const from = stack.github.state.requests.length;
    await waitFor("the final status", () => stack.finalStatus(issue), 240_000);
    // The run's end comes after the status says done (its sandboxes removed, its tokens revoked): the
    // next test's requests are its own.
    const job = fixJobId(issue.repoId, issue.number);
    await waitFor("the job to end", async () =>
      ["completed", "failed"].includes(await stack.app!.queue.queue.getJobState(job)),
    );
    const requests = stack.github.state.requests.slice(from).filter((r) => r.token);
    return { issue, requests };
  }

  /** The contents API: a file, a folder, or the root's listing (`/contents`, no path). */
  const CONTENTS = /^\/repos\/[^/]+\/[^/]+\/contents(\/|$)/;
  /** The app's own check run (publish/check-run.ts), written with a token that may only write checks. */
  const CHECK_RUNS = /^\/repos\/[^/]+\/[^/]+\/check-runs(\/|$)/;
  // A fix run reads whether its branch holds a person's commits with the contents-read token.
  const COMPARE = /^\/repos\/[^/]+\/[^/]+\/compare\//;
  const scopeOf = (token: string | undefined) => stack.github.state.tokens.get(token ?? "")?.scope;
  const allRevoked = (requests: RequestRecord[]) =>
    requests.every((r) => stack.github.state.tokens.get(r.token ?? "")?.revokedAt !== undefined);

  it("a hostile model's text reaches the PR body and comments inert; only Fixes #1 links an issue; tokens are minimal and revoked", async () => {
    const repo = await stack.addSampleRepo("hostile", sampleConfig("sample-hostile-text.jsonl"));
    const { issue, requests } = await runIssue(repo);
    const status = stack.finalStatus(issue);
    expect(status?.body).toContain("opened draft pull request #");
    const pr = stack.pulls(issue)[0]!;

    // Item 1: no live mention, and the run's own issue is the only one closed, once.
    expect(liveClosingReferences(pr.body)).toEqual(["#1"]);
    expect(liveMentions(pr.body)).toEqual([]);
    expect(pr.body).toContain("octocat"); // still readable
    const comments = [
      ...stack.github.state.commentsOn(issue.owner, issue.repo, pr.number),
      ...stack.github.state.commentsOn(issue.owner, issue.repo, issue.number),
    ];
    expect(comments.some((c) => c.body.includes("<!-- agent-fix:summary -->"))).toBe(true);
    for (const comment of comments) {
      expect(liveClosingReferences(comment.body)).toEqual([]);
      // The status comment names who asked for the run; nobody the model named.
      expect(liveMentions(comment.body).filter((login) => login !== "maintainer")).toEqual([]);
    }
    // The app's check run on the pushed commit: no live mention or closing reference either.
    const checks = stack.github.ci.checkRuns.filter((r) => r.repo === issue.repo);
    expect(checks.map((r) => r.conclusion)).toEqual(["success"]);
    for (const run of checks) {
      const text = `${run.output.title ?? ""}\n${run.output.summary ?? ""}`;
      expect(liveMentions(text)).toEqual([]);
      expect(liveClosingReferences(text)).toEqual([]);
    }
    const message = execFileSync("git", ["log", "-1", "--format=%B", pr.head], {
      cwd: stack.github.repoDir(issue.owner, issue.repo),
      encoding: "utf8",
    });
    expect(liveClosingReferences(message)).toEqual(["#1"]);

    // Item 3: the weakened tests come first, before the agent's summary.
    expect(pr.body.startsWith("## ⚠️ Changes to existing tests")).toBe(true);
    expect(pr.body.indexOf("Changes to existing tests")).toBeLessThan(pr.body.indexOf("Fixed median()"));
    expect(pr.body).toContain("- Existing test files modified: `tests/test_stats.py`");
    expect(pr.body).toContain("- Tests removed: `test_odd_length (tests/test_stats.py)`");
    // (read without the invisible joiners the neutraliser puts after every `@`)
    expect(pr.body.replaceAll("\u200D", "")).toContain(
      '- Tests skipped or narrowed: `tests/test_stats.py: @unittest.skip("slow")`',
    );
    expect(pr.body).toContain("- Fewer tests ran: 4 on the unchanged code, 3 with this change");

    // Item 4: every request of the worker used a token for this one repository, with its step's permissions.
    // (A revocation, DELETE /installation/token, is made with the token it revokes, whatever its step:
    // once the final status is written it may or may not be among the requests yet; checked below.)
    const stepRequests = requests.filter((r) => !(r.method === "DELETE" && r.path === "/installation/token"));
    expect(stepRequests.length).toBeGreaterThan(0);
    for (const request of stepRequests) {
      const scope = scopeOf(request.token);
      expect(scope?.repositoryIds, `${request.method} ${request.path}`).toEqual([repo.id]);
      const expected =
        request.method === "GIT-FETCH"
          ? TOKEN_PERMISSIONS.clone
          : request.method === "GIT-PUSH"
            ? TOKEN_PERMISSIONS.push
            : CONTENTS.test(request.path) || COMPARE.test(request.path)
              ? TOKEN_PERMISSIONS.config
              : CHECK_RUNS.test(request.path)
                ? TOKEN_PERMISSIONS.checks
                : TOKEN_PERMISSIONS.api;
      expect(scope?.permissions, `${request.method} ${request.path}`).toEqual({
        metadata: "read",
        ...expected,
      });
      // A 404 of the contents API is a file that may be absent (the devcontainer's, looked up for the
      // image; a folder that may hold a pull request template), and of the compare a branch not pushed
      // yet: a refusal of anything else would be a token without the permission its step needs.
      if (!(request.status === 404 && (CONTENTS.test(request.path) || COMPARE.test(request.path))))
        expect(request.status, `${request.method} ${request.path}`).toBeLessThan(400);
    }
    const kinds = new Set(requests.map((r) => r.method));
    expect(kinds).toContain("GIT-FETCH");
    expect(kinds).toContain("GIT-PUSH");
    expect(kinds).toContain("POST");
    expect(stepRequests.some((r) => CHECK_RUNS.test(r.path))).toBe(true);
    // All of them revoked once the run is over.
    await waitFor("the run's tokens to be revoked", () => allRevoked(requests), 30_000);
    const deletes = stack.github.state.requests.filter(
      (r) => r.method === "DELETE" && r.path === "/installation/token",
    );
    expect(deletes.every((r) => r.status === 204)).toBe(true);

    // Item 5: the link to the full trajectory expires, after the configured 2 days.
    const summary = comments.find((c) => c.body.includes("<!-- agent-fix:summary -->"))!;
    const link = /\[Full trajectory\]\((\S+\?expires=\d+&sig=\w+)\)/.exec(summary.body)?.[1];
    const expires = Number(new URL(link ?? "http://x/?expires=0").searchParams.get("expires")) * 1000;
    expect(expires).toBeLessThanOrEqual(Date.now() + 2 * DAY_MS);
    expect(expires).toBeGreaterThan(Date.now() + 1.5 * DAY_MS);
    expect((await fetch(link ?? "")).status).toBe(200);
  });

  it("a hostile model's images, <img> and phishing link reach no body, comment or commit as a fetchable or clickable outside URL", async () => {
    // The model's summary and thoughts carry an image and an <img> whose URLs hold what setup
    // installed, and an "Approve and merge" link; the issue's title (the commit message) a URL too.
    const repo = await stack.addSampleRepo("hostile-links", sampleConfig("sample-hostile-links.jsonl"));
    const { issue } = await runIssue(repo, {
      title: "median() is wrong, see https://evil.example/title.png and www.evil.example",
      body: "`median([1, 2, 3, 4])` returns `3`; it should be `2.5`.",
    });
    expect(stack.finalStatus(issue)?.body).toContain("opened draft pull request #");
    const pr = stack.pulls(issue)[0]!;
    // The GitHub host (the stand-in) and the app's own trajectory links are the only hosts allowed.
    const allowed = [stack.github.host, new URL(stack.env.PUBLIC_URL ?? "http://none").host];
    const comments = [
      ...stack.github.state.commentsOn(issue.owner, issue.repo, pr.number),
      ...stack.github.state.commentsOn(issue.owner, issue.repo, issue.number),
    ];
    expect(comments.some((c) => c.body.includes("<!-- agent-fix:summary -->"))).toBe(true);
    for (const body of [pr.body, ...comments.map((c) => c.body)]) {
      expect(liveOutsideUrls(body, allowed), body).toEqual([]);
    }
    // Still there for a reviewer to see, as code text with the note.
    expect(pr.body).toContain(
      "**[Approve and merge]\u200B(`https://evil.example/approve?pr=1`)** (link to a host not allowed)",
    );
    expect(pr.body).toContain("Approve and merge");
    expect(pr.body).not.toMatch(/<img|!\[build status\]\(/i);
    const summary = comments.find((c) => c.body.includes("<!-- agent-fix:summary -->"))!;
    expect(summary.body).toContain("evil.example/step.png");
    // The commit message: GitHub autolinks URLs there (no markdown): defanged.
    const message = execFileSync("git", ["log", "-1", "--format=%B", pr.head], {
      cwd: stack.github.repoDir(issue.owner, issue.repo),
      encoding: "utf8",
    });
    expect(message).not.toMatch(/[a-z]+:\/\/evil|www\.evil/i);
    expect(message).toContain("https[:]//evil[.]example/title[.]png");
  });

  it("a run that fails before the agent wrote a trajectory links none, and its tokens are revoked too", async () => {
    // The repository's tests already fail: the run stops after the baseline.
    const broken =
      "import unittest\n\n\nclass BrokenTest(unittest.TestCase):\n    def test_fails(self):\n        self.fail('broken')\n";
    const repo = await stack.addSampleRepo("broken", { "tests/test_broken.py": broken });
    const { issue, requests } = await runIssue(repo);
    const status = stack.finalStatus(issue);
    expect(status?.body).toContain("stopped without a pull request");
    expect(status?.body).toContain("already fail");
    expect(status?.body).not.toContain("trajector");
    expect(requests.some((r) => r.method === "GIT-FETCH")).toBe(true);
    expect(requests.some((r) => r.method === "GIT-PUSH")).toBe(false);
    for (const request of requests) expect(scopeOf(request.token)?.repositoryIds).toEqual([repo.id]);
    await waitFor("the failed run's tokens to be revoked", () => allRevoked(requests), 30_000);
  });

  it("a run that fails with an error after the agent (a forbidden path) links its trajectory and revokes its tokens", async () => {
    const repo = await stack.addSampleRepo("forbidden", {
      ...sampleConfig("sample-forbidden.jsonl"),
      ".github/workflows/ci.yml": "on: push\n",
    });
    const { issue, requests } = await runIssue(repo);
    const status = stack.finalStatus(issue);
    expect(status?.body).toContain("Nothing was pushed");
    expect(status?.body).toMatch(/\[Full trajectory\]\(\S+\?expires=\d+&sig=\w+\)/);
    expect(requests.some((r) => r.method === "GIT-PUSH")).toBe(false);
    for (const request of requests) expect(scopeOf(request.token)?.repositoryIds).toEqual([repo.id]);
    await waitFor("the failed run's tokens to be revoked", () => allRevoked(requests), 30_000);
  });
});
