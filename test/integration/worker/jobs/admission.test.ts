import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis, type FixJobData } from "../../../../src/shared/queue/index.js";
import { setAccountPlan } from "../../../../src/shared/queue/plans.js";
import { runUsage } from "../../../../src/shared/queue/usage.js";
import { quotasConfigSchema } from "../../../../worker/config/quotas.js";
import { type Notice, runAdmission } from "../../../../worker/jobs/admission.js";
import { silentLogger } from "../../../support/logs.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";

const up = await redisAvailable();

describe.skipIf(!up)("the admission of runs against the operator's limits (real Redis)", () => {
  let redis: Redis;
  const names = { prefix: testPrefix(), name: "fix" };
  const notices: Notice[] = [];
  const data = (issueNumber: number, accountId?: number): FixJobData => ({
    installationId: 5,
    ...(accountId ? { accountId } : {}),
    owner: "octo",
    repo: "demo",
    repoId: 50,
    issueNumber,
    requestedBy: "alice",
    trigger: "label",
    deliveryId: randomUUID(),
  });
  const admission = (quotas: object) =>
    runAdmission({
      redis,
      names,
      quotas: quotasConfigSchema.parse(quotas),
      usage: runUsage(redis, names),
      logger: silentLogger(),
      notify: async (_job, notice) => void notices.push(notice),
      promote: async () => false,
    });

  beforeAll(async () => {
    redis = await connectRedis(TEST_REDIS_URL, "producer");
  });
  afterAll(async () => {
    await dropPrefix(redis, names.prefix);
    redis.disconnect();
  });

  it("refuses the run over a repository's daily runs but never a run it admitted before (a retry)", async () => {
    const admit = admission({ runsAtOnce: 5, runsPerDayPerRepository: 2 }).admit;
    const first = { id: "fix-50-1", timestamp: 1, data: data(1) };
    const results = [];
    for (const job of [
      first,
      { id: "fix-50-2", timestamp: 2, data: data(2) },
      { id: "fix-50-3", timestamp: 3, data: data(3) },
    ]) {
      const result = await admit(job);
      results.push(result.kind);
      if (result.kind === "admitted") await result.release();
    }
    expect(results).toEqual(["admitted", "admitted", "refused"]);
    expect(notices.at(-1)).toMatchObject({ kind: "refused" });
    expect(notices.at(-1)?.text).toContain(
      "octo/demo has started its 2 run(s) for today under the default plan",
    );
    // The first run again (a retry, a hand-back): the same enqueue, so not a new run.
    expect((await admit(first)).kind).toBe("admitted");
  });

  it("applies the account's plan by id over the defaults", async () => {
    await setAccountPlan(redis, names, 77, { id: 435, name: "Basic Plan", accountLogin: "octo", since: "x" });
    const admit = admission({
      runsAtOnce: 5,
      runsPerDayPerRepository: 2,
      plans: { "435": { runsPerDayPerRepository: 9 } },
    }).admit;
    const result = await admit({ id: "fix-50-4", timestamp: 4, data: data(4, 77) });
    expect(result.kind).toBe("admitted");
    const refused = await admit({ id: "fix-50-5", timestamp: 5, data: data(5) });
    expect(refused.kind).toBe("refused");
  });

  it("refuses a new run once the installation's month is spent, never a run it admitted before", async () => {
    const usage = runUsage(redis, names);
    const admit = admission({ runsAtOnce: 5, monthlyBudgetUsd: 10 }).admit;
    const earlier = { id: "fix-50-6", timestamp: 6, data: data(6) };
    const admitted = await admit(earlier);
    expect(admitted.kind).toBe("admitted");
    if (admitted.kind === "admitted") await admitted.release();
    await usage.addSpend(5, 10.5);
    const refused = await admit({ id: "fix-50-7", timestamp: 7, data: data(7) });
    expect(refused).toMatchObject({ kind: "refused", statusWritten: true });
    expect(notices.at(-1)?.text).toContain(
      "monthly budget of $10.00 under the default plan is spent ($10.50",
    );
    // The earlier run again (a retry): judged once, when it first started.
    expect((await admit(earlier)).kind).toBe("admitted");
  });
});
