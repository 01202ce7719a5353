/**
 * Webhook server entry (`npm run start:server`): Probot's middleware behind a node http server (every
 * POST size-limited and signature-checked first, webhook-guard.ts), a /healthz endpoint reporting
 * Redis, Prometheus metrics at /metrics on a listener of its own (AGENT_FIX_METRICS_PORT, never the public
 * port; src/shared/metrics/, token or this host only), and a graceful shutdown on SIGTERM. It does not start without WEBHOOK_SECRET. Without APP_ID
 * and a private key it runs Probot's manifest flow instead (app.yml), so registering the app is a click.
 */

import { readFile } from "node:fs/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { createNodeMiddleware, Probot, run } from "probot";
import {
  type Env,
  githubApiUrl,
  hasAppCredentials,
  parseEnv,
  requireWebhookSecret,
} from "../shared/config/env.js";
import { throttledOctokit, WEBHOOK_THROTTLE } from "../shared/github/throttle.js";
import { checkMetricsListener, serveMetrics, trackQueueDepth } from "../shared/metrics/endpoint.js";
import { exitOnSignals } from "../shared/process-signals.js";
import { createBaseMoveQueue } from "../shared/queue/base-moves.js";
import { connectRedis } from "../shared/queue/connection.js";
import { createFixQueue, type FixQueue } from "../shared/queue/fix-queue.js";
import { trajectoryBlobsFromEnv } from "../shared/trajectory-s3.js";
import { createTrajectoryStore } from "../shared/trajectory-store.js";
import { agentFixApp } from "./app.js";
import { dashboardFor } from "./dashboard/mount.js";
import { withSignedBody } from "./handlers/deliveries.js";
import { latestRunOf } from "./handlers/info-commands.js";
import { serveTrajectory } from "./trajectories.js";
import { createWebhookGuard, signedBodyDigest, type WebhookGuard } from "./webhook-guard.js";

export interface AppServer {
  readonly url: string;
  /** The /metrics listener (AGENT_FIX_METRICS_PORT), when set: never the public port. */
  readonly metricsUrl: string | undefined;
  readonly queue: FixQueue;
  readonly probot: Probot;
  /** Stops taking requests, finishes the ones in flight, closes the queue and Redis. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Queue name override (tests use their own). */
  queueName?: string;
}

export async function startAppServer(env: Env, options: StartOptions = {}): Promise<AppServer> {
  const secret = requireWebhookSecret(env);
  checkMetricsListener("AGENT_FIX_METRICS_HOST", env.AGENT_FIX_METRICS_HOST, env.AGENT_FIX_METRICS_TOKEN);
  const privateKey =
    env.PRIVATE_KEY ?? (env.PRIVATE_KEY_PATH ? await readFile(env.PRIVATE_KEY_PATH, "utf8") : undefined);
  // Before Redis: a wrong S3 key or bucket stops the start with what to fix.
  const blobs = await trajectoryBlobsFromEnv(env);
  const redis = await connectRedis(env.AGENT_FIX_REDIS_URL, "producer");
  const queue = createFixQueue(redis, {
    prefix: env.AGENT_FIX_QUEUE_PREFIX,
    ...(options.queueName ? { name: options.queueName } : {}),
    jobOptions: {
      attempts: env.AGENT_FIX_JOB_ATTEMPTS,
      backoff: { type: "exponential", delay: env.AGENT_FIX_JOB_BACKOFF_SECONDS * 1000 },
    },
  });
  // Looks at the app's pull requests after their base moved, taken by the workers.
  const baseMoves = createBaseMoveQueue(redis, queue);
  const probot = new Probot({
    appId: env.APP_ID,
    privateKey,
    secret,
    baseUrl: githubApiUrl(env),
    logLevel: env.LOG_LEVEL,
    ...githubThrottling(env),
  });
  const settings = {
    label: env.AGENT_FIX_LABEL,
    command: env.AGENT_FIX_COMMAND,
    publicUrl: env.PUBLIC_URL,
    labelBots: env.AGENT_FIX_LABEL_BOTS,
  };
  const store = createTrajectoryStore(redis, {
    prefix: env.AGENT_FIX_QUEUE_PREFIX,
    retentionDays: env.AGENT_FIX_TRAJECTORY_RETENTION_DAYS,
    maxBytes: env.AGENT_FIX_TRAJECTORY_MAX_BYTES,
    ...(blobs ? { blobs } : {}),
  });
  const runOf = latestRunOf(store, { publicUrl: env.PUBLIC_URL, secret });
  const middleware = await createNodeMiddleware(agentFixApp({ queue, baseMoves, settings, runOf }), {
    probot,
    webhooksPath: env.WEBHOOK_PATH,
  });
  const trajectories = { store, secret };
  const dashboard = dashboardFor(env, queue.queue, store, probot.log, redis);
  const guard = webhookGuard(env, secret, probot);
  const untrackQueue = trackQueueDepth(queue.queue);
  const server = createServer((req, res) => {
    if (req.url === "/healthz") return void health(queue, res);
    void (async () => {
      // No /metrics here: this is the port a proxy forwards (see metricsListener).
      // Before the guard: the dashboard's sign-in form is a POST without a webhook signature.
      if (await dashboard(req, res)) return;
      if (await guard(req, res)) return;
      if (await serveTrajectory(trajectories, req, res)) return;
      const notFound = () => {
        res.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
      };
      // The handlers tell a replay by the digest of the bytes the guard verified (handlers/deliveries.ts).
      const digest = signedBodyDigest(req);
      if (digest) await withSignedBody(digest, async () => middleware(req, res, notFound));
      else await middleware(req, res, notFound);
    })().catch((error: unknown) => {
      probot.log.error({ err: error }, "request failed");
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(env.PORT, env.HOST, resolve));
  const { port } = server.address() as AddressInfo;
  const host = env.HOST === "0.0.0.0" ? "127.0.0.1" : env.HOST;
  const metricsServer = env.AGENT_FIX_METRICS_PORT === undefined ? undefined : await metricsListener(env);
  return {
    url: `http://${host}:${port}`,
    metricsUrl: metricsServer?.url,
    queue,
    probot,
    close: async () => {
      if (metricsServer) await closeServer(metricsServer.server);
      await closeServer(server);
      untrackQueue();
      await queue.close();
      await baseMoves.close();
      await redis.quit().catch(() => redis.disconnect());
      blobs?.close();
    },
  };
}

/**
 * /metrics on a listener of its own, never the public port: a TCP pass-through in front of that port
 * adds no X-Forwarded-For, so its clients arrive from a loopback peer and would pass the local check.
 * It binds AGENT_FIX_METRICS_HOST (loopback unless the token is set: checkMetricsListener).
 */
async function metricsListener(env: Env): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/metrics") {
      void serveMetrics(req, res, env.AGENT_FIX_METRICS_TOKEN).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("Not found: this listener serves /metrics\n");
  });
  await new Promise<void>((resolve) =>
    server.listen(env.AGENT_FIX_METRICS_PORT, env.AGENT_FIX_METRICS_HOST, resolve),
  );
  const { port } = server.address() as AddressInfo;
  const host = env.AGENT_FIX_METRICS_HOST === "0.0.0.0" ? "127.0.0.1" : env.AGENT_FIX_METRICS_HOST;
  return { server, url: `http://${host}:${port}` };
}

/** Rate limits waited out; with spacing on, shared by every process through the deployment's Redis. */
function githubThrottling(env: Env) {
  const id = `agent-fix-${env.APP_ID ?? "app"}`;
  const spacing = env.AGENT_FIX_GITHUB_THROTTLE;
  return {
    Octokit: throttledOctokit({ id, spacing, ...WEBHOOK_THROTTLE }),
    ...(spacing ? { redisConfig: env.AGENT_FIX_REDIS_URL } : {}),
  };
}

/** Size limit and signature check of every POST, before Probot buffers or logs anything of it. */
function webhookGuard(env: Env, secret: string, probot: Probot): WebhookGuard {
  return createWebhookGuard({
    secret,
    maxBytes: env.AGENT_FIX_WEBHOOK_MAX_BYTES,
    // A few deliveries at full size at once; beyond that a flood of large bodies gets 503.
    budgetBytes: 4 * env.AGENT_FIX_WEBHOOK_MAX_BYTES,
    log: probot.log.child({ name: "webhook-guard" }),
  });
}

async function health(queue: FixQueue, res: ServerResponse): Promise<void> {
  const redis = await Promise.race([
    queue.redis.ping().then(
      () => "ok",
      () => "down",
    ),
    sleep(2_000, "timeout", { ref: false }),
  ]);
  const ok = redis === "ok";
  res.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
  res.end(JSON.stringify({ status: ok ? "ok" : "degraded", redis }));
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** Entry: the app server, or Probot's manifest flow when the app is not registered yet. */
export async function main(): Promise<void> {
  const env = parseEnv();
  if (!hasAppCredentials(env)) {
    // Probot serves the setup page from app.yml and writes APP_ID, PRIVATE_KEY, WEBHOOK_SECRET to .env.
    await run(() => {});
    return;
  }
  const app = await startAppServer(env);
  app.probot.log.info(`agent-fix listening on ${app.url}${env.WEBHOOK_PATH}`);
  exitOnSignals(() => app.close(), { log: (message) => app.probot.log.info(message) });
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    const hint = (error as { hint?: unknown }).hint;
    if (typeof hint === "string") console.error(hint);
    process.exit(1);
  });
}
