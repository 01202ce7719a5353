/**
 * The model endpoint answering 429 (OpenAI's rate-limit answer) for a while, from the agent's fourth
 * call on (after it edited the code): with a retry-after that fits the model client's retry budget
 * (model.retry.maxRetries, 5) the run waits the outage out and opens its pull request; with a short
 * retry-after the retries run out inside the outage and the run ends with `exit_api`, keeping its work
 * (the trajectory, and the change it made shown in the final status). The outage lasts
 * FAULT_MODEL_429_SECONDS (default 10, to keep CI short; 60 proves the minute).
 */
import { afterAll, describe, it } from "vitest";
import { sampleFixReplies, stackWithModelStandIn } from "../support/model-stack.js";
import type { OpenAIStandIn } from "../support/openai-server.js";
import { requireRedis } from "../support/services.js";
import { type Stack, sampleConfig } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";
import { jobRetries, reportFigure } from "./figures.js";

const ready = await requireRedis();
const OUTAGE_S = Number(process.env.FAULT_MODEL_429_SECONDS ?? 10);
/** Model calls answered before the outage: search, open, edit. */
const SERVED_FIRST = 3;

// The two side by side, each with a stack and a model stand-in of its own (the stand-in's script and
// outage are one run's): most of each is the outage and the client's waits.
describe.runIf(ready).concurrent(`the model endpoint answering 429 for ${OUTAGE_S} s`, () => {
  const stops: (() => Promise<void>)[] = [];
  afterAll(() => Promise.all(stops.map((stop) => stop())));
  /** A started stack whose model is a stand-in of its own, in installation `installationId`. */
  async function startStack(installationId: number): Promise<{ stack: Stack; model: OpenAIStandIn }> {
    // The sandbox is not under test here: the local one keeps the file quick. An installation each:
    // see StackOptions.installationId.
    const { stack, start, stop } = stackWithModelStandIn({
      sandbox: "local",
      env: { OPENAI_API_KEY: "sk-stand-in" },
      installationId,
    });
    stops.push(stop);
    return { stack, model: await start() };
  }
  const outageFrom = (model: OpenAIStandIn) => model.requests[SERVED_FIRST]?.receivedAt ?? Date.now();

  it(
    "a retry-after the client may wait: the run waits the outage out and opens its pull request",
    async ({ expect }) => {
      const { stack, model } = await startStack(1);
      const replies = sampleFixReplies();
      model.enqueue(...replies);
      // Four attempts a third of the outage apart: the fourth comes after it.
      const retryAfterSeconds = Math.ceil(OUTAGE_S / 3);
      model.rateLimitFor({ afterRequests: SERVED_FIRST, forMs: OUTAGE_S * 1000, retryAfterSeconds });
      const issue = stack.addIssue(await stack.addSampleRepo("model-waits", sampleConfig(null)));
      await stack.label(issue);

      const status = await waitFor(
        "the final status",
        () => stack.finalStatus(issue),
        OUTAGE_S * 1000 + 180_000,
      );
      expect(status.body).toContain("opened draft pull request");
      expect(stack.pulls(issue)).toHaveLength(1);
      // Every 429 was answered by waiting: the script was used up once, nothing asked twice.
      expect(model.rateLimited()).toBeGreaterThanOrEqual(3);
      expect(model.remaining()).toBe(0);
      const end = outageFrom(model) + OUTAGE_S * 1000;
      const served = model.requests.slice(SERVED_FIRST).find((r) => r.receivedAt >= end);
      reportFigure({
        fault: `model 429 for ${OUTAGE_S} s, retry-after ${retryAfterSeconds} s`,
        outcome: "pull request",
        recoverMs: (served?.receivedAt ?? end) - end,
        jobRetries: await jobRetries(stack, issue),
        detail: `429 answers ${model.rateLimited()}, model calls ${model.requests.length}`,
      });
    },
    300_000 + OUTAGE_S * 1000,
  );

  it("a retry-after too short for the outage: the run ends with exit_api and keeps its work", async ({
    expect,
  }) => {
    const { stack, model } = await startStack(2);
    const before = model.rateLimited();
    model.enqueue(...sampleFixReplies().slice(0, SERVED_FIRST));
    // Six attempts a second apart end well inside the outage.
    model.rateLimitFor({
      afterRequests: SERVED_FIRST,
      forMs: Math.max(OUTAGE_S, 10) * 1000,
      retryAfterSeconds: 1,
    });
    const issue = stack.addIssue(await stack.addSampleRepo("model-gives-up", sampleConfig(null)));
    await stack.label(issue);

    const status = await waitFor("the final status", () => stack.finalStatus(issue), 180_000);
    const gaveUpAt = Date.now();
    expect(status.body).toContain("stopped without a pull request");
    expect(status.body).toContain("The model API kept failing");
    expect(status.body).toContain("`exit_api`");
    // The edit the agent made before the outage is kept and shown, tested.
    expect(status.body).toContain("diff --git a/textstats/stats.py b/textstats/stats.py");
    expect(status.body).toContain("+        return (ordered[middle - 1] + ordered[middle]) / 2");
    // The trajectory is linked (written by the run, served by the app).
    const link = /\((http[^)]+\.traj[^)]*)\)/.exec(status.body)?.[1];
    expect(link).toBeDefined();
    const trajectory = (await (await fetch(`${link!}&format=json`)).json()) as {
      info: { exit_status: string };
    };
    expect(trajectory.info.exit_status).toContain("exit_api");
    // The client's retry budget: the first attempt and model.retry.maxRetries (5) more.
    expect(model.rateLimited() - before).toBe(6);
    expect(stack.pulls(issue)).toEqual([]);
    reportFigure({
      fault: "model 429, retry-after 1 s (retries run out)",
      outcome: "exit_api, change kept in the status, trajectory linked",
      recoverMs: gaveUpAt - outageFrom(model),
      jobRetries: await jobRetries(stack, issue),
      detail: `429 answers ${model.rateLimited() - before}`,
    });
  }, 300_000);
});
