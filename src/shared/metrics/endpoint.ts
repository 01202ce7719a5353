/**
 * GET /metrics for the server and the worker. Protected: with AGENT_FIX_METRICS_TOKEN set, only a
 * request bearing it (`Authorization: Bearer TOKEN`) is answered; without it, only one from this host
 * that no proxy forwarded (a loopback peer and no Forwarded/X-Forwarded-For header). Queue depths are
 * read from Redis at each scrape.
 *
 * Never on the public webhook port: a TCP pass-through in front of it adds no X-Forwarded-For, so an
 * outside client would arrive from a loopback peer. The server serves /metrics on a listener of its own
 * (AGENT_FIX_METRICS_PORT), the worker on its ops server; each binds loopback unless the token is set.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Queue } from "bullmq";
import { ConfigError } from "../errors.js";
import { metrics, registry } from "./registry.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);
const STATES = ["waiting", "delayed", "prioritized", "active", "completed", "failed"] as const;

/** Queues whose depth each scrape reads, by `prefix:name` (a process may register one twice). */
const tracked = new Map<string, Queue>();

/** Adds the queue's job counts to every scrape of this process; returns the undo. */
export function trackQueueDepth(queue: Queue): () => void {
  const key = `${queue.opts.prefix ?? "bull"}:${queue.name}`;
  tracked.set(key, queue);
  return () => {
    if (tracked.get(key) === queue) tracked.delete(key);
  };
}

async function readQueueDepths(): Promise<void> {
  metrics.queueJobs.reset();
  await Promise.all(
    [...tracked].map(async ([key, queue]) => {
      const counts = await queue.getJobCounts(...STATES).catch(() => undefined);
      // Redis down: no series rather than zeros that would read as an empty queue.
      for (const state of STATES) {
        if (counts) metrics.queueJobs.set({ queue: key, state }, counts[state] ?? 0);
      }
    }),
  );
}

/** Whether `host` (a listener's bind address) is reachable from this host only. */
function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Refuses a metrics listener bound off loopback without AGENT_FIX_METRICS_TOKEN: whoever reaches that
 * address (a proxy, a pass-through, a neighbour) would read the metrics unauthenticated.
 */
export function checkMetricsListener(variable: string, host: string, token: string | undefined): void {
  if (token || isLoopbackHost(host)) return;
  throw new ConfigError(
    `${variable}=${host} would serve /metrics off this host without a token: anyone who reaches that address could read them`,
    {
      code: "metrics_off_host",
      hint: `Set AGENT_FIX_METRICS_TOKEN (16 characters or more) to scrape from elsewhere, or bind ${variable}=127.0.0.1.`,
    },
  );
}

/** Why a request may not read the metrics, or null when it may. */
function metricsRefusal(req: IncomingMessage, token: string | undefined): string | null {
  if (token) {
    const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b) ? null : "a valid bearer token is required";
  }
  const forwarded = req.headers.forwarded !== undefined || req.headers["x-forwarded-for"] !== undefined;
  if (LOOPBACK.has(req.socket.remoteAddress ?? "") && !forwarded) return null;
  return "only this host may read the metrics: set AGENT_FIX_METRICS_TOKEN to scrape from elsewhere";
}

/** Answers GET /metrics; `token` is AGENT_FIX_METRICS_TOKEN. */
export async function serveMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  token: string | undefined,
): Promise<void> {
  const refusal = metricsRefusal(req, token);
  if (refusal) {
    res.writeHead(token ? 401 : 403, {
      "content-type": "text/plain",
      ...(token ? { "www-authenticate": 'Bearer realm="metrics"' } : {}),
    });
    res.end(`${refusal}\n`);
    return;
  }
  await readQueueDepths();
  res.writeHead(200, { "content-type": registry.contentType });
  res.end(await registry.metrics());
}
