/**
 * A check run left in progress, ended by its mark: the marks in the real Redis (taken once), and the
 * ending against the stand-in's checks API (GitHub's documented list for a ref and update): only the
 * app's own check runs of that name still in progress on the marked commit are completed.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis } from "../../../../../src/shared/queue/index.js";
import { openCheckRunKey } from "../../../../../src/shared/queue/keys.js";
import {
  CHECK_RUN_NAME,
  type ChecksApi,
  createCheckRun,
} from "../../../../../worker/run/publish/check-run.js";
import {
  type CheckRunsApi,
  cancelledEnding,
  endCheckRunsAt,
  endLeftCheckRun,
  failedEnding,
  leftCheckRuns,
  SUPERSEDED_ENDING,
} from "../../../../../worker/run/publish/left-check-runs.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";
import { silentLogger } from "../../../../support/logs.js";
import { draftOf, submittedTrajectory } from "../../../../support/published.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../../support/redis.js";

const up = await redisAvailable();

describe.skipIf(!up)("a check run left in progress", () => {
  let github: GitHubServer;
  let redis: Redis;
  let api: ChecksApi & CheckRunsApi;
  const names = { prefix: testPrefix(), name: "fix" };
  const owner = "octo";
  let repos = 0;

  async function repo() {
    const name = `left-${repos++}`;
    const added = await github.addRepo({ owner, name, files: { "a.txt": "a\n" } });
    const headSha = (await github.branches(owner, name)).main ?? "";
    return { name, place: { installationId: 1, repoId: added.id, owner, repo: name, headSha } };
  }
  const started = (name: string, headSha: string) =>
    createCheckRun(api, {
      repo: { owner, repo: name },
      headSha,
      draft: draftOf(submittedTrajectory("Added b.")),
    });
  const checksOf = (name: string) => github.ci.checkRuns.filter((r) => r.repo === name);

  beforeAll(async () => {
    github = await startGitHubServer();
    redis = await connectRedis(TEST_REDIS_URL, "producer");
    api = await installationApi<ChecksApi & CheckRunsApi>(github);
  });
  afterAll(async () => {
    await dropPrefix(redis, names.prefix);
    redis.disconnect();
    await github.stop();
  });

  it("marks: taken once, cleared once completed; a mark that does not parse names nothing", async () => {
    const marks = leftCheckRuns(redis, names);
    const { place } = await repo();
    await marks.mark("fix-1-1", place);
    expect(await marks.take("fix-1-1")).toEqual(place);
    expect(await marks.take("fix-1-1")).toBeNull();
    await marks.mark("fix-1-2", place);
    await marks.clear("fix-1-2");
    expect(await marks.take("fix-1-2")).toBeNull();
    await redis.set(openCheckRunKey(names, "fix-1-3"), JSON.stringify({ owner: "octo" }));
    expect(await marks.take("fix-1-3")).toBeNull();
  });

  it("completes the app's check runs of the name in progress on the commit, and no other", async () => {
    const { name, place } = await repo();
    await started(name, place.headSha);
    await started(name, place.headSha);
    const done = await started(name, place.headSha);
    await done.complete("success");
    // Another app's check of the same name, and the repository's own CI, stay as they are.
    const other = { id: 7, slug: "other-ci", name: "Other CI" };
    await github.ci.addCheckRun(owner, name, {
      sha: place.headSha,
      name: CHECK_RUN_NAME,
      status: "in_progress",
      app: other,
    });
    await github.ci.addCheckRun(owner, name, { sha: place.headSha, name: "build", status: "in_progress" });

    const ended = await endCheckRunsAt(
      api,
      place,
      CHECK_RUN_NAME,
      github.appSlug,
      cancelledEnding("@alice", "fix-me"),
    );
    expect(ended).toBe(2);
    const states = checksOf(name).map((r) => [r.name, r.app.slug, r.status, r.conclusion]);
    expect(states).toEqual([
      [CHECK_RUN_NAME, github.appSlug, "completed", "cancelled"],
      [CHECK_RUN_NAME, github.appSlug, "completed", "cancelled"],
      [CHECK_RUN_NAME, github.appSlug, "completed", "success"],
      [CHECK_RUN_NAME, "other-ci", "in_progress", null],
      ["build", expect.any(String), "in_progress", null],
    ]);
    const [first] = checksOf(name);
    expect(first?.output.title).toBe("The run was cancelled");
    expect(first?.output.summary).toBe(
      "The run was cancelled by alice after it pushed this commit, so the tested change was not published from it and this check did not finish. To run again, add the `fix-me` label to the issue again or comment `/agent-fix` on it (on the pull request, `/agent-fix` with what to change starts a round there).",
    );
    expect(await endCheckRunsAt(api, place, CHECK_RUN_NAME, github.appSlug, SUPERSEDED_ENDING)).toBe(0);
  });

  it("by the job's mark: ended once, with the ending given; nothing marked, nothing asked", async () => {
    const marks = leftCheckRuns(redis, names);
    const { name, place } = await repo();
    await started(name, place.headSha);
    await marks.mark("fix-2-1", place);
    const parts = { leftCheckRuns: marks, auth: unusedAuth, identity: { name: github.bot.login } };
    const ending = failedEnding("The push was refused: protected branch.", "agent-fix");
    await endLeftCheckRun(parts, "fix-2-1", ending, silentLogger(), async () => api);
    const [check] = checksOf(name);
    expect(check).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(check?.output.summary).toContain(
      "The push was refused: protected branch.\n\nThe run failed for good",
    );
    const asked = github.state.requests.length;
    await endLeftCheckRun(parts, "fix-2-1", SUPERSEDED_ENDING, silentLogger(), async () => api);
    expect(github.state.requests.length).toBe(asked);
  });
});

/** The run's own client is passed: no token is minted. */
const unusedAuth = {
  forRun(): never {
    throw new Error("no token is minted when the run's client is given");
  },
};
