/**
 * Prometheus metrics of a real run: the real server and the worker as `npm run start:worker` starts it
 * (its own /healthz and /metrics server), the GitHub stand-in answering one 502 and one secondary rate
 * limit, the OpenAI-compatible stand-in one 500. Every counter the operator's guide names moves. A second
 * run's model call answered 400 counts as the model's error once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedWorker, startWorkerFromEnv } from "../../worker/main.js";
import { sampleValue, scrape } from "../support/metrics.js";
import { sampleFixReplies, stackWithModelStandIn } from "../support/model-stack.js";
import type { OpenAIStandIn } from "../support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { sampleConfig } from "../support/stack.js";
import { waitFor } from "../support/stack-parts.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("metrics of a run, at the server's and the worker's /metrics", () => {
  const token = "metrics-token-of-the-test";
  const env = { AGENT_FIX_METRICS_TOKEN: token, AGENT_FIX_WORKER_PORT: "0", AGENT_FIX_METRICS_PORT: "0" };
  const { stack, start, stop } = stackWithModelStandIn({ worker: false, env });
  let model: OpenAIStandIn;
  let worker: StartedWorker;

  beforeAll(async () => {
    model = await start();
    worker = await startWorkerFromEnv(stack.env);
  });
  afterAll(async () => {
    await worker?.stop();
    await stop();
  });

  it("refuses /metrics without the token, on both servers", async () => {
    expect((await scrape(stack.app!.metricsUrl!)).status).toBe(401);
    expect((await scrape(stack.app!.metricsUrl!, "wrong-token-of-same-size!")).status).toBe(401);
    expect((await scrape(worker.ops!.url)).status).toBe(401);
  });

  it("counts the run, its wait, tokens and cost, the sandboxes, GitHub's 502 and rate limit, the model's 500", async () => {
    const before = (await scrape(worker.ops!.url, token)).text;
    const repo = await stack.addSampleRepo("metered", sampleConfig(null));
    const issue = stack.addIssue(repo);
    model.enqueue({ kind: "error", status: 500, message: "upstream down" }, ...sampleFixReplies());
    stack.github.failNext("GET", new RegExp(`/repos/octo/metered/issues/${issue.number}$`), 502);
    stack.github.rateLimitNext("POST", /\/repos\/octo\/metered\/pulls$/, {
      status: 429,
      retryAfterSeconds: 1,
    });
    expect(await stack.label(issue)).toBe(200);
    const status = await waitFor("the run to finish", () => stack.finalStatus(issue), 240_000);
    expect(status.body).toContain("opened draft pull request");

    // The outcome is counted once the processor returns, just after the final status is written.
    await waitFor(
      "the run's outcome to be counted",
      async () =>
        sampleValue((await scrape(worker.ops!.url, token)).text, "agent_fix_runs_total", {
          outcome: "pull_request",
        }) ===
        sampleValue(before, "agent_fix_runs_total", { outcome: "pull_request" }) + 1,
    );
    const { status: code, text } = await scrape(worker.ops!.url, token);
    expect(code).toBe(200);
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(text, name, labels) - sampleValue(before, name, labels);
    // What this run moved: an earlier file's runs in this test process count in the same registry.
    expect(moved("agent_fix_run_duration_seconds_count", { outcome: "pull_request" })).toBe(1);
    expect(moved("agent_fix_run_duration_seconds_sum", { outcome: "pull_request" })).toBeGreaterThan(0);
    expect(moved("agent_fix_queue_wait_seconds_count")).toBe(1);
    const installation = String(repo.installationId);
    const labels = { model: "openai:gpt-4.1", installation };
    expect(moved("agent_fix_model_tokens_total", { ...labels, kind: "prompt" })).toBeGreaterThan(0);
    expect(moved("agent_fix_model_tokens_total", { ...labels, kind: "completion" })).toBeGreaterThan(0);
    expect(moved("agent_fix_model_cost_usd_total", labels)).toBeGreaterThan(0);
    expect(moved("agent_fix_model_api_errors_total", { model: "openai:gpt-4.1", reason: "500" })).toBe(1);
    // Setup is skipped without commands: baseline, agent, gate and proof each start one sandbox.
    expect(moved("agent_fix_sandbox_start_seconds_count", { driver: "docker" })).toBeGreaterThanOrEqual(3);
    expect(moved("agent_fix_github_api_errors_total", { process: "worker", status: "502" })).toBe(1);
    expect(
      moved("agent_fix_github_rate_limits_total", { process: "worker", kind: "secondary", action: "waited" }),
    ).toBe(1);
    expect(moved("agent_fix_github_rate_limit_wait_seconds_total", { process: "worker" })).toBe(1);

    // The server's /metrics reads the queue's depth from Redis: the job is completed, none waits.
    const queue = `${stack.prefix}:agent-fix`;
    const depth = async (state: string) => {
      const server = await scrape(stack.app!.metricsUrl!, token);
      expect(server.status).toBe(200);
      return sampleValue(server.text, "agent_fix_queue_jobs", { queue, state });
    };
    await waitFor("the job to show as completed", async () => (await depth("completed")) === 1);
    expect(await depth("waiting")).toBe(0);
    expect(await depth("active")).toBe(0);
    // Sizing figures for docs/operating.md: the worker process's memory, peak and now.
    // The peak of a later scrape covers the resident memory an earlier one reported (one scrape reads
    // the two at different moments, so they are not compared with each other).
    const later = (await scrape(worker.ops!.url, token)).text;
    const peak = sampleValue(later, "agent_fix_process_max_resident_memory_bytes");
    expect(peak).toBeGreaterThanOrEqual(sampleValue(text, "agent_fix_process_resident_memory_bytes"));
    console.log(`worker process (${stack.prefix}): peak RSS ${Math.round(peak / 2 ** 20)} MiB`);
  }, 300_000);

  it("counts a model call that fails for good (a 400, never retried) once, under its status", async () => {
    // The 500 above is counted as the failed attempt a retry follows; this is the call's last failure.
    expect(model.remaining()).toBe(0);
    const before = (await scrape(worker.ops!.url, token)).text;
    const calls = model.requests.length;
    const repo = await stack.addSampleRepo("metered-400", sampleConfig(null));
    const issue = stack.addIssue(repo);
    model.enqueue({ kind: "error", status: 400, message: "the request is malformed" });
    expect(await stack.label(issue)).toBe(200);
    const status = await waitFor("the run to finish", () => stack.finalStatus(issue), 240_000);
    expect(status.body).toContain("The model API kept failing");
    const runs = (text: string) => sampleValue(text, "agent_fix_runs_total", { outcome: "no_pull_request" });
    await waitFor(
      "the run's outcome to be counted",
      async () => runs((await scrape(worker.ops!.url, token)).text) === runs(before) + 1,
    );
    const { text } = await scrape(worker.ops!.url, token);
    expect(model.requests.length - calls).toBe(1);
    const errors = (at: string) =>
      sampleValue(at, "agent_fix_model_api_errors_total", { model: "openai:gpt-4.1", reason: "400" });
    expect(errors(text) - errors(before)).toBe(1);
  }, 300_000);

  it("the worker's /healthz reports the engine, the sandbox image and Redis", async () => {
    const response = await fetch(`${worker.ops!.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: "ok",
      docker: "ok",
      sandboxImage: "ok",
      redis: "ok",
    });
  });
});
