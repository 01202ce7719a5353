/**
 * The installation's monthly spend counts every billed model call, also of a run that throws: the
 * agent runner as the worker builds it (worker/run/solve/agent-runner.ts, with the spend counter of
 * worker/run/solve/monthly-spend.ts), the real openai SDK against the stand-in billing each call, a local
 * sandbox that is lost after two steps (as a sandbox is when the Docker engine goes away), and the
 * count in the real Redis.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gate } from "../../../../../src/shared/contracts.js";
import { connectRedis } from "../../../../../src/shared/queue/index.js";
import { pullRequestCosts } from "../../../../../src/shared/queue/pull-costs.js";
import { runUsage } from "../../../../../src/shared/queue/usage.js";
import { loadConfig } from "../../../../../worker/agent/config-file.js";
import { createAgentRunner } from "../../../../../worker/run/solve/agent-runner.js";
import { monthlySpend } from "../../../../../worker/run/solve/monthly-spend.js";
import { silentLogger } from "../../../../support/logs.js";
import {
  type OpenAIStandIn,
  type ScriptedReply,
  startOpenAIStandIn,
} from "../../../../support/openai-server.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../../support/redis.js";
import { startEnvironment } from "../../agent/harness.js";

const up = await redisAvailable();
/** 1M prompt tokens at the stand-in's $2 per million: $2 a call. */
const billed = (command: string): ScriptedReply => ({
  kind: "message",
  content: `running ${command}`,
  toolCalls: [{ name: "bash", arguments: { command } }],
  usage: { prompt_tokens: 1_000_000, completion_tokens: 0 },
});

describe.skipIf(!up)("monthly spend of a run that throws (real Redis, openai SDK, stand-in)", () => {
  let redis: Redis;
  let model: OpenAIStandIn;
  const names = { prefix: testPrefix(), name: "fix" };

  beforeAll(async () => {
    redis = await connectRedis(TEST_REDIS_URL, "producer");
    model = await startOpenAIStandIn();
  });
  afterAll(async () => {
    await dropPrefix(redis, names.prefix);
    redis.disconnect();
    await model?.close();
  });

  it("counts the three calls billed before the sandbox was lost", async () => {
    const usage = runUsage(redis, names);
    const pulls = pullRequestCosts(redis, names);
    const operator = await loadConfig({
      overrides: {
        model: {
          baseUrl: model.url,
          prices: { asOf: "2025-08-15", models: { "gpt-test": { input: 2, cachedInput: 0.5, output: 8 } } },
          retry: { maxRetries: 0 },
        },
      },
    });
    const runner = await createAgentRunner(
      {
        operator,
        modelOverride: "openai:gpt-test",
        env: { OPENAI_API_KEY: "sk-test" },
        spend: monthlySpend(usage, silentLogger(), pulls)({ installationId: 77, repoId: 9, pullNumber: 4 }),
      },
      { maxSteps: 10, maxCostUsd: 100 },
      "octo-calc-1-1",
    );
    model.enqueue(billed("ls"), billed("cat calc/ops.py"), billed("python -m pytest -q"));
    const { sandbox } = await startEnvironment();
    const gate: Gate = async () => ({ passed: false, output: "no submission is made in this test" });
    const run = runner({
      sandbox,
      issue: { number: 1, title: "mean() crashes", body: "on []" },
      repoName: "octo/calc",
      gate,
      signal: new AbortController().signal,
      // After the second step the sandbox is gone: the third call is billed, then its command throws.
      onStep: ({ step }) => {
        if (step === 2) void sandbox.dispose();
      },
    });
    await expect(run).rejects.toThrow("the sandbox has been disposed");
    expect(model.requests).toHaveLength(3);
    expect(await usage.spentThisMonth(77)).toBeCloseTo(6, 6);
    // A round on pull request #4: the same calls count against that pull request's total, no other's.
    expect(await pulls.total(9, 4)).toBeCloseTo(6, 6);
    expect(await pulls.total(9, 5)).toBe(0);
  });

  it("a run on no pull request (the issue's first) counts against the month only", async () => {
    const usage = runUsage(redis, names);
    const pulls = pullRequestCosts(redis, names);
    await monthlySpend(usage, silentLogger(), pulls)({ installationId: 78, repoId: 10 })(1.5);
    expect(await usage.spentThisMonth(78)).toBeCloseTo(1.5, 6);
    expect(await pulls.total(10, 1)).toBe(0);
    await pulls.add(10, 1, 0.25);
    await pulls.add(10, 1, 0.5);
    expect(await pulls.total(10, 1)).toBeCloseTo(0.75, 6);
    expect(await pulls.sayCeilingOnce(10, 1)).toBe(true);
    expect(await pulls.sayCeilingOnce(10, 1)).toBe(false);
    expect(await pulls.total(10, 1)).toBeCloseTo(0.75, 6);
  });
});
