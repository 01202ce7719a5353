/**
 * The worker's small HTTP server for operators (AGENT_FIX_WORKER_PORT; off when unset): GET /healthz
 * (200, or 503 naming what is down: worker/health.ts) and GET /metrics (src/shared/metrics/endpoint.ts,
 * behind AGENT_FIX_METRICS_TOKEN or this host only). It binds AGENT_FIX_WORKER_HOST, 127.0.0.1 unless
 * set: enough for the container's HEALTHCHECK; set 0.0.0.0 and the token to let Prometheus scrape it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { checkMetricsListener, serveMetrics } from "../src/shared/metrics/endpoint.js";
import type { HealthReport } from "./health.js";
import type { Logger } from "./log.js";

interface OpsServerOptions {
  port: number;
  host: string;
  metricsToken?: string | undefined;
  health: () => Promise<HealthReport>;
  logger: Logger;
}

export interface OpsServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  // The worker's port is not behind the webhook proxy, but the same rule holds: off loopback only with the token.
  checkMetricsListener("AGENT_FIX_WORKER_HOST", options.host, options.metricsToken);
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method === "GET" && req.url === "/healthz") {
        const report = await options.health();
        res.writeHead(report.status === "ok" ? 200 : 503, { "content-type": "application/json" });
        res.end(JSON.stringify(report));
        return;
      }
      if (req.method === "GET" && req.url === "/metrics")
        return await serveMetrics(req, res, options.metricsToken);
      res
        .writeHead(404, { "content-type": "text/plain" })
        .end("Not found: the worker serves /healthz and /metrics\n");
    })().catch((err: unknown) => {
      options.logger.error({ err }, "ops request failed");
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" ? "127.0.0.1" : options.host;
  options.logger.info(`worker /healthz and /metrics on http://${host}:${port}`);
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
