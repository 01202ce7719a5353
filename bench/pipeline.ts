/**
 * Pipeline benchmark (`npm run bench:pipeline`): the real app server and worker against the GitHub
 * stand-in, the real Redis and Docker. Ends with one JSON line.
 * - webhook_to_active_ms_p50/p99: a signed `issues.labeled` webhook sent to its job being active in an
 *   idle worker (the worker's real BullMQ code, with a processor that only notes the time). Goal: p50 <= 50 ms.
 * - enqueue_per_s: webhooks accepted per second by one server process (distinct issues, 16 in flight).
 * - overhead_s: a whole run on the sample repository with the replay model (median of 5 after a warm-up), minus agent and test time
 *   (clone, sandbox, setup, publish, queueing), beside baseline_s: a bare `git clone` of the same
 *   repository plus `docker run` of the sandbox image on it, measured in the same run. Goal: overhead <= 2x baseline.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { SANDBOX_IMAGE } from "../sandbox/version.js";
import { silentLogger } from "../test/support/logs.js";
import { requireRedis, requireSandboxImage } from "../test/support/services.js";
import { Stack } from "../test/support/stack.js";
import { waitFor } from "../test/support/stack-parts.js";
import { startFixWorker } from "../worker/main.js";
import { authHeader } from "../worker/run/checkout/git.js";
import { completed, type JobResult } from "../worker/run-end.js";

const run = promisify(execFile);
const LATENCY_SAMPLES = 60;
const BURST = 200;
const RUNS = 5;
/** Runs before the measured ones: the first loads grammars, warms Docker and the connections. */
const WARMUP_RUNS = 1;

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const median = (values: number[]) => quantile(values, 0.5);
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

async function main(): Promise<void> {
  if (!(await requireRedis()) || !(await requireSandboxImage())) process.exit(1);
  const stack = new Stack({ worker: false });
  await stack.start();
  try {
    // 1. Webhook to active, one job at a time into an idle worker.
    const started = new Map<string, number>();
    const probe = await startFixWorker({
      redisUrl: stack.env.AGENT_FIX_REDIS_URL!,
      prefix: stack.prefix,
      logger: silentLogger(),
      process: async (job) => {
        started.set(job.id ?? "", performance.now());
        return completed(null);
      },
    });
    const repo = await stack.addSampleRepo("latency");
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES + 5; i++) {
      const issue = stack.addIssue(repo);
      const jobId = `fix-${repo.id}-${issue.number}`;
      const sent = performance.now();
      await stack.label(issue);
      const active = await waitFor("the job to start", () => started.get(jobId), 30_000, 1);
      if (i >= 5) latencies.push(active - sent); // the first few warm connections and code paths
      await waitFor("the worker to be idle", () => probe.activeJobs().length === 0, 30_000, 1);
    }
    await probe.shutdown(0);

    // 2. Enqueue throughput: many distinct issues, no worker taking them.
    const burstRepo = await stack.addSampleRepo("burst");
    const issues = Array.from({ length: BURST }, () => stack.addIssue(burstRepo));
    const burstStart = performance.now();
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < issues.length) statuses.push(await stack.label(issues[next++]!));
      }),
    );
    const burstSeconds = (performance.now() - burstStart) / 1000;
    const accepted = statuses.filter((s) => s < 300).length;
    const waiting = await stack.app!.queue.queue.getWaitingCount();
    await stack.app!.queue.queue.obliterate({ force: true });

    // 3. Whole runs with the replay model, and the bare baseline, alternating in the same run.
    await stack.startWorker();
    const overheads: number[] = [];
    const totals: number[] = [];
    const baselines: number[] = [];
    const parts: JobResult["timings"][] = [];
    for (let i = 0; i < WARMUP_RUNS + RUNS; i++) {
      const runRepo = await stack.addSampleRepo(`run-${i}`);
      const issue = stack.addIssue(runRepo);
      const sent = performance.now();
      await stack.label(issue);
      await waitFor("the pull request", () => stack.finalStatus(issue), 300_000, 20);
      const total = (performance.now() - sent) / 1000;
      const jobId = `fix-${runRepo.id}-${issue.number}`;
      await waitFor(
        "the job to complete",
        async () => (await stack.app!.queue.queue.getJobState(jobId)) === "completed",
        30_000,
        10,
      );
      const job = await stack.app!.queue.queue.getJob(jobId);
      const result = job?.returnvalue as JobResult | undefined;
      if (result?.kind !== "pull_request")
        throw new Error(`run ${i} opened no pull request: ${JSON.stringify(result)}`);
      const t = result.timings;
      if (i < WARMUP_RUNS) continue;
      parts.push(t);
      totals.push(total);
      overheads.push(total - ((t.agent ?? 0) + (t.tests ?? 0)) / 1000);
      baselines.push(await bareBaseline(stack, runRepo.owner, runRepo.name));
    }

    const p50 = median(latencies);
    const p99 = quantile(latencies, 0.99);
    const overhead = median(overheads);
    const baseline = median(baselines);
    console.log(
      `webhook -> active (${latencies.length} samples): p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (goal p50 <= 50 ms)`,
    );
    console.log(
      `enqueue: ${accepted}/${BURST} accepted in ${burstSeconds.toFixed(2)} s = ${(accepted / burstSeconds).toFixed(1)}/s (${waiting} jobs waiting)`,
    );
    for (const [i, t] of parts.entries()) {
      const line = Object.entries(t)
        .map(([step, ms]) => `${step} ${((ms ?? 0) / 1000).toFixed(2)}`)
        .join(", ");
      console.log(
        `run ${i + 1}: total ${totals[i]!.toFixed(2)} s (${line} s), baseline ${baselines[i]!.toFixed(2)} s`,
      );
    }
    console.log(
      `overhead ${overhead.toFixed(2)} s vs baseline ${baseline.toFixed(2)} s (git clone + docker run): ratio ${(overhead / baseline).toFixed(2)} (goal <= 2)`,
    );
    console.log(
      JSON.stringify({
        webhook_to_active_ms_p50: round(p50, 1),
        webhook_to_active_ms_p99: round(p99, 1),
        enqueue_per_s: round(accepted / burstSeconds, 1),
        overhead_s: round(overhead),
        baseline_s: round(baseline),
        overhead_ratio: round(overhead / baseline),
        run_total_s: round(median(totals)),
      }),
    );
  } finally {
    await stack.stop();
  }
}

/** A bare `git clone` of the repository from the stand-in plus `docker run` of the sandbox image on it. */
async function bareBaseline(stack: Stack, owner: string, repo: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "af-bench-"));
  try {
    const token = stack.github.mintToken();
    const start = performance.now();
    await run("git", [
      "-c",
      `http.extraheader=${authHeader(token)}`,
      "clone",
      "--quiet",
      "--depth",
      "1",
      `${stack.github.url}/${owner}/${repo}.git`,
      join(dir, "repo"),
    ]);
    await run("docker", [
      "run",
      "--rm",
      "--network",
      "none",
      "-v",
      `${join(dir, "repo")}:/workspace`,
      SANDBOX_IMAGE,
      "true",
    ]);
    return (performance.now() - start) / 1000;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
