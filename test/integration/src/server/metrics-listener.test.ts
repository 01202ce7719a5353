/**
 * /metrics is never served on the public webhook port. A TCP pass-through in front of it (a load
 * balancer in TCP mode, `socat`, an SSH forward) adds no X-Forwarded-For, so an outside client arrives
 * from a loopback peer, which the local check alone let through. The server serves /metrics on a
 * listener of its own (AGENT_FIX_METRICS_PORT), bound to loopback unless the token is set.
 */

import type { AddressInfo } from "node:net";
import { connect, createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppServer } from "../../../../src/server/app-server.js";
import { parseEnv } from "../../../../src/shared/config/env.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { scrape } from "../../../support/metrics.js";
import { redisAvailable, TEST_REDIS_URL } from "../../../support/redis.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";

const up = await redisAvailable();

/** A TCP pass-through to `target` (what a proxy in TCP mode does): bytes both ways, no header added. */
async function passThrough(target: string): Promise<{ url: string; close: () => void }> {
  const { hostname, port } = new URL(target);
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe.runIf(up)("the server's /metrics: never on the public port", () => {
  let github: GitHubServer;
  let app: WebhookApp;

  beforeAll(async () => {
    github = await startGitHubServer();
    app = await startWebhookApp({ github, secret: "metrics-secret", env: { AGENT_FIX_METRICS_PORT: "0" } });
  });
  afterAll(async () => {
    await app?.close();
    await github?.stop();
  });

  it("a client behind a TCP pass-through to the webhook port reads no metrics", async () => {
    const proxy = await passThrough(app.server.url);
    try {
      const through = await scrape(proxy.url);
      expect(through.status).toBe(404);
      expect(through.text).not.toContain("agent_fix_");
      // Straight from this host to the public port: not there either.
      expect((await scrape(app.server.url)).status).toBe(404);
    } finally {
      proxy.close();
    }
  });

  it("serves them on its own loopback listener", async () => {
    expect(app.server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const local = await scrape(app.server.metricsUrl ?? "");
    expect(local.status).toBe(200);
    expect(local.text).toContain("agent_fix_");
  });

  it("does not start a metrics listener off loopback without the token, and says how to fix it", async () => {
    const error = await startAppServer(
      parseEnv({
        WEBHOOK_SECRET: "metrics-secret",
        AGENT_FIX_REDIS_URL: TEST_REDIS_URL,
        PORT: "0",
        AGENT_FIX_METRICS_PORT: "0",
        AGENT_FIX_METRICS_HOST: "0.0.0.0",
      }),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "metrics_off_host", fault: "config" });
    expect((error as Error).message).toContain("AGENT_FIX_METRICS_HOST=0.0.0.0");
    expect((error as { hint?: string }).hint).toContain("AGENT_FIX_METRICS_TOKEN");
  });
});
