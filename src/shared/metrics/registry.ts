/**
 * agent-fix's Prometheus metrics (prom-client), one registry per process: the server and the worker
 * each serve it at /metrics (src/shared/metrics/endpoint.ts); `npm start`, both in one process, serves one
 * registry with both sides' series. Every metric is named here, with what its labels hold.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export const registry = new Registry();
// Process metrics (memory, CPU, event-loop lag, handles) under the same prefix.
collectDefaultMetrics({ register: registry, prefix: "agent_fix_" });

/** How a run ended for the worker that held it. */
export type RunOutcomeLabel =
  | "pull_request"
  | "no_pull_request"
  | "failed"
  | "retrying"
  | "cancelled"
  | "handed_back";

/** Which process made a GitHub request: the webhook server or the worker. */
export type GitHubCaller = "webhook" | "worker";

const MINUTE = 60;

export const metrics = {
  runs: new Counter({
    name: "agent_fix_runs_total",
    help: "Runs (attempts of a job) ended in this process, by outcome: retrying = failed with a retry to come",
    labelNames: ["outcome"] as const,
    registers: [registry],
  }),
  runDuration: new Histogram({
    name: "agent_fix_run_duration_seconds",
    help: "Wall time of one run (one attempt of a job) from its start on a worker to its end, by outcome",
    labelNames: ["outcome"] as const,
    buckets: [
      30,
      MINUTE,
      2 * MINUTE,
      5 * MINUTE,
      10 * MINUTE,
      20 * MINUTE,
      30 * MINUTE,
      60 * MINUTE,
      120 * MINUTE,
    ],
    registers: [registry],
  }),
  queueWait: new Histogram({
    name: "agent_fix_queue_wait_seconds",
    help: "Time a job waited in the queue before a worker first started it",
    buckets: [1, 5, 15, MINUTE, 5 * MINUTE, 15 * MINUTE, 60 * MINUTE, 240 * MINUTE],
    registers: [registry],
  }),
  queueJobs: new Gauge({
    name: "agent_fix_queue_jobs",
    help: "Jobs in the queue by state (waiting, delayed, prioritized, active, completed, failed), read from Redis at each scrape",
    labelNames: ["queue", "state"] as const,
    registers: [registry],
  }),
  modelTokens: new Counter({
    name: "agent_fix_model_tokens_total",
    help: "Model tokens by model, installation and kind (prompt includes cached_prompt)",
    labelNames: ["model", "installation", "kind"] as const,
    registers: [registry],
  }),
  modelCost: new Counter({
    name: "agent_fix_model_cost_usd_total",
    help: "Model cost in USD by model and installation, from the operator's price table (0 for unpriced models)",
    labelNames: ["model", "installation"] as const,
    registers: [registry],
  }),
  modelErrors: new Counter({
    name: "agent_fix_model_api_errors_total",
    help: "Failed model API calls (each failed attempt, retried or not) by model and reason (HTTP status or error kind)",
    labelNames: ["model", "reason"] as const,
    registers: [registry],
  }),
  sandboxStart: new Histogram({
    name: "agent_fix_sandbox_start_seconds",
    help: "Time to create and start one sandbox, by driver",
    labelNames: ["driver"] as const,
    buckets: [0.25, 0.5, 1, 2, 5, 10, 30, MINUTE],
    registers: [registry],
  }),
  sandboxStarts: new Counter({
    name: "agent_fix_sandbox_starts_total",
    help: "Sandboxes started, by driver and whether a standby served it (from=standby) or it started afresh (from=fresh)",
    labelNames: ["driver", "from"] as const,
    registers: [registry],
  }),
  githubErrors: new Counter({
    name: "agent_fix_github_api_errors_total",
    help: "GitHub API responses of 400 and above (each attempt; 404 is often an expected absence) and network failures, by process and status",
    labelNames: ["process", "status"] as const,
    registers: [registry],
  }),
  githubRateLimits: new Counter({
    name: "agent_fix_github_rate_limits_total",
    help: "GitHub rate limits met, by process, kind (primary, secondary) and whether the request waited or gave up",
    labelNames: ["process", "kind", "action"] as const,
    registers: [registry],
  }),
  peakMemory: new Gauge({
    name: "agent_fix_process_max_resident_memory_bytes",
    help: "Peak resident memory of this process since it started (getrusage's maxrss), for sizing hosts",
    registers: [registry],
    collect() {
      this.set(process.resourceUsage().maxRSS * 1024);
    },
  }),
  githubRateLimitWait: new Counter({
    name: "agent_fix_github_rate_limit_wait_seconds_total",
    help: "Seconds spent waiting out GitHub rate limits (as GitHub's retry-after asked), by process",
    labelNames: ["process"] as const,
    registers: [registry],
  }),
};
