/**
 * The GitHub client both processes use (throttledOctokit, spacing off as against every stand-in), its
 * retries now run without Bottleneck (request-retries.ts): what GitHub answers decides, as before,
 * whether a request is sent again.
 */
import { ProbotOctokit } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverErrorRetries } from "../../../../../src/shared/github/request-retries.js";
import { throttledOctokit, WEBHOOK_THROTTLE } from "../../../../../src/shared/github/throttle.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";

describe("throttledOctokit against the stand-in", () => {
  let github: GitHubServer;
  let client: InstanceType<ReturnType<typeof throttledOctokit>>;
  const repo = { owner: "octo", repo: "retries" };
  const ISSUE = /^\/repos\/octo\/retries\/issues\/1$/;

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({ owner: "octo", name: "retries", files: { "a.txt": "a\n" } });
    github.addIssue("octo", "retries", { title: "Bug" });
    const Octokit = throttledOctokit({ id: "retries-test", spacing: false, ...WEBHOOK_THROTTLE });
    client = new Octokit({ auth: { token: github.mintToken() }, baseUrl: `${github.url}/api/v3` });
  });
  afterAll(() => github.stop());

  const issueReads = () => github.state.requests.filter((r) => r.method === "GET" && ISSUE.test(r.path));

  it("sends a request that met a 502 again, and returns the answer that followed", async () => {
    const before = issueReads().length;
    github.failNext("GET", ISSUE, 502);
    const { data } = await client.rest.issues.get({ ...repo, issue_number: 1 });
    expect(data.title).toBe("Bug");
    expect(
      issueReads()
        .slice(before)
        .map((r) => r.status),
    ).toEqual([502, 200]);
  });

  it("waits out a secondary rate limit for the retry-after GitHub gave, then sends it again", async () => {
    const before = issueReads().length;
    github.rateLimitNext("GET", ISSUE, { status: 403, retryAfterSeconds: 1 });
    const { data } = await client.rest.issues.get({ ...repo, issue_number: 1 });
    expect(data.number).toBe(1);
    expect(
      issueReads()
        .slice(before)
        .map((r) => r.status),
    ).toEqual([403, 200]);
  });

  it("does not send again what a retry cannot change (404, 422)", async () => {
    const before = github.state.requests.length;
    await expect(client.rest.issues.get({ ...repo, issue_number: 999 })).rejects.toMatchObject({
      status: 404,
    });
    github.failNext("GET", ISSUE, 422);
    await expect(client.rest.issues.get({ ...repo, issue_number: 1 })).rejects.toMatchObject({ status: 422 });
    expect(github.state.requests.slice(before).map((r) => r.status)).toEqual([404, 422]);
  });

  it("gives up after three retries of a server error, with GitHub's last answer", async () => {
    // The same retries with millisecond waits (throttledOctokit's are 1, 4 and 9 s).
    const Quick = ProbotOctokit.plugin(serverErrorRetries(1)).defaults({
      retry: { enabled: false },
      throttle: { enabled: false },
    });
    const quick = new Quick({ auth: { token: github.mintToken() }, baseUrl: `${github.url}/api/v3` });
    const before = issueReads().length;
    github.failNext("GET", ISSUE, 500, 4);
    await expect(quick.rest.issues.get({ ...repo, issue_number: 1 })).rejects.toMatchObject({ status: 500 });
    expect(
      issueReads()
        .slice(before)
        .map((r) => r.status),
    ).toEqual([500, 500, 500, 500]);
  });
});
