import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitHubError } from "../../../src/errors.js";
import { keepForRetry, pendingPublishes, pendingRun } from "../../../worker/pipeline/pending-publish.js";
import type { Publisher } from "../../../worker/pipeline/types.js";
import { draftOf, submittedTrajectory } from "../../support/published.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../queue/redis.js";

const ready = await redisAvailable();

// The tested, pushed change kept in the real Redis when opening its pull request fails.
describe.runIf(ready)("a change kept for a publish-only retry", () => {
  let redis: Redis;
  const prefix = testPrefix();
  const names = { prefix, name: "fix" };

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await dropPrefix(redis, prefix);
    redis.disconnect();
  });

  const failingWith = (error: Error): Publisher => ({
    openOrUpdatePullRequest: () => Promise.reject(error),
    requestReview: () => Promise.resolve(),
    postSummary: () => Promise.resolve(),
  });

  it("is kept when GitHub failed in a way a retry may fix, once, for that job's run only", async () => {
    const store = pendingPublishes(redis, names);
    const run = pendingRun({ id: "fix-1-1", timestamp: 1_000 });
    const draft = draftOf(submittedTrajectory("Fixed it."));
    const publisher = keepForRetry(
      failingWith(new GitHubError("502", { code: "pull_request_failed", retryable: true })),
      store,
      run,
    );
    await expect(publisher.openOrUpdatePullRequest(draft)).rejects.toThrow("502");
    expect(await store.take(pendingRun({ id: "fix-1-1", timestamp: 2_000 }))).toBeNull();
    expect(await store.take(run)).toEqual(draft);
    expect(await store.take(run)).toBeNull();
  });

  it("is not kept when GitHub refused the request itself", async () => {
    const store = pendingPublishes(redis, names);
    const run = pendingRun({ id: "fix-1-2", timestamp: 1_000 });
    const publisher = keepForRetry(
      failingWith(new GitHubError("422", { code: "pull_request_failed", retryable: false })),
      store,
      run,
    );
    await expect(publisher.openOrUpdatePullRequest(draftOf(submittedTrajectory("x")))).rejects.toThrow("422");
    expect(await store.take(run)).toBeNull();
  });
});
