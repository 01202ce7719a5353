/**
 * The app's check run against the stand-in's checks API (GitHub's documented create and update): in
 * progress until the publish step completes it, failure with the reason when publishing fails after
 * the push, no live mention or setup secret in its text, and a refusal named rather than thrown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZERO_WIDTH_JOINER } from "../../../../../src/shared/github/neutralise.js";
import { STATUS_MARKER } from "../../../../../src/shared/github/status.js";
import type { FixJobData } from "../../../../../src/shared/queue/index.js";
import { githubStatusReporter, type WorkerGitHubApi } from "../../../../../worker/run/open/status-comment.js";
import {
  CHECK_RUN_NAME,
  type ChecksApi,
  createCheckRun,
} from "../../../../../worker/run/publish/check-run.js";
import type { Publisher } from "../../../../../worker/run/publish/github-publisher.js";
import { publishPullRequest } from "../../../../../worker/run/publish/publish-pull-request.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";
import { draftOf, submittedTrajectory } from "../../../../support/published.js";

describe("the app's check run", () => {
  let github: GitHubServer;
  let api: ChecksApi & WorkerGitHubApi;
  const owner = "octo";
  let repos = 0;

  async function repo() {
    const name = `checks-${repos++}`;
    const added = await github.addRepo({
      owner,
      name,
      files: { "a.txt": "a\n" },
      permissions: { alice: "write" },
    });
    github.addIssue(owner, name, { title: "a.txt needs b" });
    const head = (await github.branches(owner, name)).main ?? "";
    const job: FixJobData = {
      ...{ installationId: 1, owner, repo: name, repoId: added.id, issueNumber: 1, requestedBy: "alice" },
      ...{ trigger: "label" as const, deliveryId: `d-${name}` },
    };
    return { name, head, job };
  }
  const checksOf = (name: string) => github.ci.checkRuns.filter((r) => r.repo === name);

  beforeAll(async () => {
    github = await startGitHubServer();
    api = await installationApi<ChecksApi & WorkerGitHubApi>(github);
  });
  afterAll(async () => {
    await github.stop();
  });

  it("stays in progress until published; a failure to open the pull request completes it as failure, with the reason", async () => {
    const { name, head, job } = await repo();
    const draft = draftOf(submittedTrajectory("Added b."));
    const check = await createCheckRun(api, {
      repo: { owner, repo: name },
      headSha: head,
      draft,
      detailsUrl: "https://agent-fix.example/trajectories/run.traj?expires=1&sig=x",
      secrets: { DEPLOY_KEY: "s3cr3t-deploy-value" },
    });
    expect(checksOf(name)).toMatchObject([
      { name: CHECK_RUN_NAME, headSha: head, status: "in_progress", conclusion: null },
    ]);
    const failing: Publisher = {
      openOrUpdatePullRequest: () =>
        Promise.reject(new Error("GitHub said no to @alice: fixes #3, key s3cr3t-deploy-value")),
      requestReview: () => Promise.resolve({ owners: [], problems: [] }),
      postSummary: () => Promise.resolve(),
    };
    await expect(
      publishPullRequest({
        publisher: failing,
        status: githubStatusReporter(api, job),
        draft,
        requestedBy: "alice",
        check,
      }),
    ).rejects.toThrow("GitHub said no");
    const [run] = checksOf(name);
    expect(run).toMatchObject({
      status: "completed",
      conclusion: "failure",
      detailsUrl: "https://agent-fix.example/trajectories/run.traj?expires=1&sig=x",
    });
    expect(run?.output.title).toBe("The run failed after pushing this commit");
    expect(run?.output.summary).toContain(`GitHub said no to @${ZERO_WIDTH_JOINER}alice`);
    expect(run?.output.summary).toContain(`f${ZERO_WIDTH_JOINER}ixes #3`);
    expect(run?.output.summary).toContain("key [secret]");
    expect(run?.output.summary).not.toContain("s3cr3t-deploy-value");
    expect(run?.output.summary).toContain("**With the change**: passed");
  });

  it("a refused check run is named in the final status beside the pull request; the run does not fail", async () => {
    const { name, head, job } = await repo();
    github.failAlways("POST", new RegExp(`^/repos/${owner}/${name}/check-runs$`), 403, {
      message: "Resource not accessible by integration",
      documentation_url: "https://docs.github.com/rest/checks/runs#create-a-check-run",
      status: "403",
    });
    const draft = draftOf(submittedTrajectory("Added b."));
    const check = await createCheckRun(api, { repo: { owner, repo: name }, headSha: head, draft });
    const opened: Publisher = {
      openOrUpdatePullRequest: () => Promise.resolve({ number: 7, url: "https://github.example/pull/7" }),
      requestReview: () => Promise.resolve({ owners: [], problems: [] }),
      postSummary: () => Promise.resolve(),
    };
    const published = await publishPullRequest({
      publisher: opened,
      status: githubStatusReporter(api, job),
      draft,
      requestedBy: "alice",
      check,
    });
    expect(published.problems).toEqual([
      expect.stringContaining(
        `The check run "${CHECK_RUN_NAME}" could not be created: Resource not accessible by integration`,
      ),
    ]);
    const status = github.state.commentsOn(owner, name, 1).find((c) => c.body.includes(STATUS_MARKER));
    expect(status?.body).toContain("opened draft pull request #7");
    expect(status?.body).toContain("checks: write");
    expect(checksOf(name)).toEqual([]);
  });
});
