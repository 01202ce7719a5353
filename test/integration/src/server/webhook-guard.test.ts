/**
 * The webhook guard over a real HTTP server: many large bodies at once cannot together exhaust the
 * server's memory, because the bytes all requests hold are capped (the rest get 503 and are not read).
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebhookGuard } from "../../../../src/server/webhook-guard.js";
import { waitFor } from "../../../support/stack-parts.js";

const KB = 1024;

describe("the webhook guard under many large bodies at once", () => {
  let server: Server;
  let url = "";
  const warnings: string[] = [];

  beforeAll(async () => {
    const guard = createWebhookGuard({
      secret: "s",
      maxBytes: 100 * KB,
      budgetBytes: 400 * KB,
      log: { warn: (_fields, message) => warnings.push(message) },
    });
    server = createServer(async (req, res) => {
      if (await guard(req, res)) return;
      res.end("passed\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("five bodies of 90 KB held open against a 400 KB budget: one or more get 503, the rest still complete", async () => {
    const statuses: (number | undefined)[] = [];
    const requests = Array.from({ length: 5 }, (_, i) => {
      const req = request(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "issues",
          "x-github-delivery": `held-${i}`,
          "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
        },
      });
      req.on("response", (res) => {
        statuses[i] = res.statusCode;
        res.resume();
      });
      req.on("error", () => {});
      req.write(Buffer.alloc(90 * KB, "x"));
      return req;
    });
    // 450 KB are now in flight against a 400 KB budget: without the cap no answer would ever come.
    await waitFor("a 503", () => statuses.includes(503), 30_000, 20);
    for (const req of requests) req.end();
    await waitFor("every answer", () => statuses.filter(Boolean).length === 5, 30_000, 20);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    // The others were read whole (under the limit) and refused for their bogus signature.
    expect(statuses.filter((s) => s !== 503).every((s) => s === 401)).toBe(true);
    expect(warnings.some((w) => w.includes("in flight"))).toBe(true);
  });
});
