import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitHubError } from "../../../../../src/shared/errors.js";
import type { Publisher } from "../../../../../worker/run/publish/github-publisher.js";
import {
  keepForRetry,
  pendingPublishes,
  pendingRun,
} from "../../../../../worker/run/publish/pending-publishes.js";
import { draftOf, submittedTrajectory } from "../../../../support/published.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../../support/redis.js";

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
    requestReview: () => Promise.resolve({ owners: [], problems: [] }),
    postSummary: () => Promise.resolve(),
  });

  it("is kept when GitHub failed in a way a retry may fix, for that job's run only, until dropped", async () => {
    const store = pendingPublishes(redis, names);
    const key = pendingRun({ id: "fix-1-1", timestamp: 1_000 });
    const draft = draftOf(submittedTrajectory("Fixed it."));
    const publisher = keepForRetry(
      failingWith(new GitHubError("502", { code: "pull_request_failed", retryable: true })),
      store,
      key,
      "octo-repo-1-1000",
    );
    await expect(publisher.openOrUpdatePullRequest(draft)).rejects.toThrow("502");
    expect(await store.read(pendingRun({ id: "fix-1-1", timestamp: 2_000 }))).toBeNull();
    // Read, not taken: an attempt that stops before publishing leaves it for the next one.
    expect(await store.read(key)).toEqual({ run: "octo-repo-1-1000", draft });
    expect(await store.read(key)).toEqual({ run: "octo-repo-1-1000", draft });
    await store.drop(key);
    expect(await store.read(key)).toBeNull();
  });

  it("is not kept when GitHub refused the request itself", async () => {
    const store = pendingPublishes(redis, names);
    const key = pendingRun({ id: "fix-1-2", timestamp: 1_000 });
    const publisher = keepForRetry(
      failingWith(new GitHubError("422", { code: "pull_request_failed", retryable: false })),
      store,
      key,
      "run",
    );
    await expect(publisher.openOrUpdatePullRequest(draftOf(submittedTrajectory("x")))).rejects.toThrow("422");
    expect(await store.read(key)).toBeNull();
  });

  it("a record another version wrote, or a half one, is no kept change", async () => {
    const store = pendingPublishes(redis, names);
    const key = pendingRun({ id: "fix-1-3", timestamp: 1_000 });
    const draft = draftOf(submittedTrajectory("x"));
    for (const value of [draft, { run: "r", draft, unpushed: { patch: "diff" } }, "not json"]) {
      await redis.set(
        `${prefix}:fix:publish:${key}`,
        typeof value === "string" ? value : JSON.stringify(value),
      );
      expect(await store.read(key)).toBeNull();
    }
  });
});
