/**
 * Redis restarted while a run is in the agent phase, on a private redis-server (appendonly, the
 * deployment's deploy/redis.conf) so the shared one is never touched: after a crash (SIGKILL) and
 * after an operator's restart (SHUTDOWN), with the same data dir, and for longer than the job's lock
 * lives: the job is not lost nor run twice, the run ends with its one pull request (completed or
 * retried), and the status comment ends final. A run takes one of the three in turn (test/support/sample.ts:
 * by the hour; all three when the worker's job code or this test changed, or with TEST_SAMPLE=all).
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnRedis } from "../support/own-redis.js";
import { sampleOf } from "../support/sample.js";
import { requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";
import { fixJobIdOf, jobRetries, reportFigure } from "./figures.js";

const ready = await requireSandboxImage();
const REDIS_CONF = join(import.meta.dirname, "..", "..", "deploy", "redis.conf");

describe.runIf(ready)("Redis restarted mid-run", () => {
  let redis: OwnRedis;
  const stacks: Stack[] = [];
  beforeAll(async () => {
    redis = await OwnRedis.start([REDIS_CONF]);
  });
  afterAll(async () => {
    for (const stack of stacks) await stack.stop();
    await redis?.remove();
  });

  const restarts = sampleOf(
    "Redis restarts",
    [
      { how: "SIGKILL", stop: () => redis.kill(), downMs: 0, lockMs: 60_000 },
      { how: "SHUTDOWN", stop: () => redis.stop(), downMs: 0, lockMs: 60_000 },
      // Down longer than the lock lives: the worker cannot renew it, the stall check may move the job.
      { how: "SIGKILL, down past the lock", stop: () => redis.kill(), downMs: 6_000, lockMs: 3_000 },
    ],
    {
      perSlot: 1,
      name: (restart) => restart.how,
      ownCode: ["test/faults/redis-restart.test.ts", "test/support/own-redis.ts", "worker/jobs/"],
    },
  );
  for (const title of restarts.skipped) it.skip(title, () => {});
  it.each(restarts.run)(
    "$how while the agent works: one pull request, the job completed, the status final",
    async ({ how, stop, downMs, lockMs }) => {
      const stack = new Stack({ model: null, lockMs, env: { AGENT_FIX_REDIS_URL: redis.url } });
      stacks.push(stack);
      await stack.start();
      const name = `redis-${how.replace(/\W+/g, "-").toLowerCase()}`;
      const repo = await stack.addSampleRepo(name, sampleConfig("sample-median-pause.jsonl"));
      const issue = stack.addIssue(repo);
      expect(await stack.label(issue)).toBe(200);
      // The replay's first step sleeps 8 s in the sandbox: Redis goes down and comes back inside it.
      await waitFor("the agent's first step", () => stack.inPhase(issue, "Working on a fix"), 120_000);
      await stop();
      await sleep(downMs);
      await redis.start();
      const back = Date.now();

      const status = await waitFor("the status to be final", () => stack.finalStatus(issue), 180_000);
      const recoverMs = Date.now() - back;
      expect(status.body).toContain("opened draft pull request");
      // The job itself is completed too, not left active or failed.
      const job = await stack.app?.queue.queue.getJob(fixJobIdOf(issue));
      const ended = async () => {
        const state = await job?.getState();
        return state === "completed" || state === "failed" ? state : undefined;
      };
      expect(await waitFor("the job to end", ended, 120_000)).toBe("completed");
      expect(stack.pulls(issue)).toHaveLength(1);
      // Pushed once: the run was not done twice over.
      expect(stack.github.pushes.filter((p) => p.repo === repo.name)).toHaveLength(1);
      expect(stack.finalStatus(issue)?.body).toContain("opened draft pull request");
      reportFigure({
        fault: `Redis ${how} + restart (agent phase)`,
        outcome: `pull request #${stack.pulls(issue)[0]?.number}, job ${await job?.getState()}`,
        recoverMs,
        jobRetries: await jobRetries(stack, issue),
        detail: `status edits ${status.history.length}`,
      });
    },
    300_000,
  );
});
