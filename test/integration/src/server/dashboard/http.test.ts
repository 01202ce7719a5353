/**
 * The dashboard over HTTP (src/server/dashboard/): off without a secret, every page but the sign-in behind a
 * signed session cookie, Bull Board's API too, model text escaped under a CSP that allows no script.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardFor } from "../../../../../src/server/dashboard/mount.js";
import { FAILED_SIGN_INS } from "../../../../../src/server/dashboard/sign-in-limit.js";
import { parseEnv } from "../../../../../src/shared/config/env.js";
import type { Trajectory } from "../../../../../src/shared/contracts.js";
import { createTrajectoryStore, type TrajectoryStore } from "../../../../../src/shared/trajectory-store.js";
import { redisAvailable } from "../../../../support/redis.js";
import { DASHBOARD_SECRET, type DashboardApp, RUNS, startDashboardApp } from "./dashboard-app.js";

const up = await redisAvailable();

/** The shared-secret sign-in form, posted as a browser would (through a proxy: its X-Forwarded-For). */
const signInTo = (app: DashboardApp, secret: string, forwardedFor?: string) =>
  fetch(`${app.url}/dashboard/login`, {
    method: "POST",
    body: new URLSearchParams({ secret }),
    headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {},
    redirect: "manual",
  });

describe("dashboard switch", () => {
  it("is off without AGENT_FIX_DASHBOARD_SECRET or GitHub sign-in and says how to turn it on", async () => {
    const lines: string[] = [];
    const handler = dashboardFor(
      parseEnv({}),
      {} as Queue,
      {} as TrajectoryStore,
      { info: (m) => lines.push(m) },
      {} as Redis,
    );
    expect(lines).toEqual([
      "dashboard off: set AGENT_FIX_DASHBOARD_SECRET (e.g. `openssl rand -hex 32`) or the GitHub App's GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET to serve it under /dashboard",
    ]);
    expect(await handler({} as never, {} as never)).toBe(false);
  });

  it("refuses a GitHub client id without its secret, saying where to find it", () => {
    const env = parseEnv({ GITHUB_CLIENT_ID: "Iv23liabcdef" });
    const log = { info: () => {} };
    expect(() => dashboardFor(env, {} as Queue, {} as TrajectoryStore, log, {} as Redis)).toThrow(
      "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together",
    );
  });

  it("AGENT_FIX_TRUST_PROXY: a hop count or addresses/CIDRs; true and malformed addresses are refused", () => {
    expect(parseEnv({ AGENT_FIX_TRUST_PROXY: "1" }).AGENT_FIX_TRUST_PROXY).toEqual({ hops: 1 });
    expect(parseEnv({ AGENT_FIX_TRUST_PROXY: "loopback, 10.0.0.0/8" }).AGENT_FIX_TRUST_PROXY).toEqual({
      addresses: ["loopback", "10.0.0.0/8"],
    });
    expect(parseEnv({}).AGENT_FIX_TRUST_PROXY).toBeUndefined();
    expect(() => parseEnv({ AGENT_FIX_TRUST_PROXY: "true" })).toThrow(
      "AGENT_FIX_TRUST_PROXY: true would let any client choose its address",
    );
    expect(() => parseEnv({ AGENT_FIX_TRUST_PROXY: "10.0.0.300" })).toThrow(
      "AGENT_FIX_TRUST_PROXY: invalid IP address: 10.0.0.300",
    );
  });

  it("refuses a secret too short to be one", () => {
    expect(() => parseEnv({ AGENT_FIX_DASHBOARD_SECRET: "short" })).toThrow("AGENT_FIX_DASHBOARD_SECRET");
  });
});

describe.skipIf(!up)("dashboard over HTTP (real server, Redis, GitHub stand-in)", () => {
  let app: DashboardApp;
  let cookie: string;
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${app.url}${path}`, { headers, redirect: "manual" });
  const signIn = (secret: string) => signInTo(app, secret);

  beforeAll(async () => {
    app = await startDashboardApp();
    const answer = await signIn(DASHBOARD_SECRET);
    expect(answer.status).toBe(303);
    const setCookie = answer.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly; SameSite=Strict/);
    expect(setCookie).toContain("Path=/dashboard");
    cookie = setCookie.split(";")[0]!;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("without a session: the sign-in page for every path, Bull Board's API included", async () => {
    for (const path of [
      "/dashboard",
      "/dashboard/",
      `/dashboard/runs/${RUNS.gate}`,
      "/dashboard/queue/api/queues",
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(401);
      expect(await answer.text(), path).toContain('action="/dashboard/login"');
    }
  });

  it("a wrong secret, a forged or another secret's cookie sign in nobody", async () => {
    expect((await signIn("not-the-secret-at-all")).status).toBe(401);
    const [name, value] = cookie.split("=") as [string, string];
    const [expires, mac] = value.split(".") as [string, string];
    const later = `${name}=${Number(expires) + 3600}.${mac}`;
    const flipped = `${name}=${expires}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    for (const forged of [later, flipped, `${name}=${expires}`]) {
      expect((await get("/dashboard/", { cookie: forged })).status, forged).toBe(401);
    }
  });

  it("signed in: the runs list, the queue through Bull Board, a run's page", async () => {
    const list = await get("/dashboard/", { cookie });
    expect(list.status).toBe(200);
    const listed = await list.text();
    expect(listed).toContain(`href="/dashboard/runs/${RUNS.gate}"`);
    expect(listed).toContain("octo/calc#3");
    const queues = await get("/dashboard/queue/api/queues", { cookie });
    expect(queues.status).toBe(200);
    const body = (await queues.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    expect(body.queues.map((queue) => queue.name)).toEqual(["agent-fix"]);
    expect(body.queues[0]?.counts.waiting).toBe(1);
    const run = await get(`/dashboard/runs/${RUNS.gate}`, { cookie });
    expect(run.status).toBe(200);
    const page = await run.text();
    expect(page).toContain('<section class="step failing" id="step-3">');
    expect(page).toContain('<span class="add">+        return 0</span>');
    expect(page).toContain("<tr><th>Image</th><td><code>local:vm (no isolation)</code></td></tr>");
    expect((await get("/dashboard/runs/no-such-run", { cookie })).status).toBe(404);
    for (const path of ["..%2F..%2Fetc", "%E0%A4%A", "a%2Fb"]) {
      expect((await get(`/dashboard/runs/${path}`, { cookie })).status, path).toBe(404);
    }
  });

  it("pages through older runs, 200 a page, from where the last page ended even as new runs come in", async () => {
    const store = createTrajectoryStore(app.web.server.queue.redis, {
      prefix: app.web.prefix,
      retentionDays: 1,
      maxBytes: 1 << 20,
    });
    const base = JSON.parse(
      await readFile(
        join(import.meta.dirname, "../../../../fixtures/dashboard/gate-fails-once.traj"),
        "utf8",
      ),
    ) as Trajectory;
    const startedAt = (secondsAgo: number): Trajectory => ({
      ...base,
      info: { ...base.info, started_at: new Date(Date.now() - secondsAgo * 1000).toISOString() },
    });
    // 200 runs of the last minutes, newer than the two fixture runs: those two are the second page.
    for (let i = 1; i <= 200; i++)
      await store.save(`octo-calc-${100 + i}-1`, { repo: "octo/calc", issue: 100 + i }, startedAt(300 - i));
    const rows = (page: string) => page.match(/<tr><td><a href="\/dashboard\/runs\/[^"]+"/g) ?? [];
    const first = await (await get("/dashboard/", { cookie })).text();
    expect(rows(first)).toHaveLength(200);
    expect(first).toContain('href="/dashboard/runs/octo-calc-300-1"');
    expect(first).not.toContain(`href="/dashboard/runs/${RUNS.gate}"`);
    const older = /<a class="older" href="([^"]+)">Older runs<\/a>/.exec(first)?.[1];
    expect(older).toBe("/dashboard/?after=octo-calc-101-1");
    // A run that comes in meanwhile goes on top; the next page still starts after the last one seen.
    await store.save("octo-calc-400-1", { repo: "octo/calc", issue: 400 }, startedAt(0));
    const second = await (await get(older!, { cookie })).text();
    expect(rows(second)).toHaveLength(2);
    expect(second).toContain(`href="/dashboard/runs/${RUNS.gate}"`);
    expect(second).toContain(`href="/dashboard/runs/${RUNS.hostile}"`);
    expect(second).not.toContain('class="older"');
    expect(second).toContain('<a class="newest" href="/dashboard/">Newest runs</a>');
    const past = await (await get(`/dashboard/?after=${RUNS.gate}`, { cookie })).text();
    expect(past).toContain("No older runs");
  });

  it("a hostile model's markup is escaped text, under a CSP that runs no script", async () => {
    const answer = await get(`/dashboard/runs/${RUNS.hostile}`, { cookie });
    const csp = answer.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    const page = await answer.text();
    expect(page).not.toMatch(/<script|<img|href="javascript:/i);
    expect(page).toContain("&lt;script&gt;window.__pwned = &#39;thought&#39;&lt;/script&gt;");
  });
});

describe.skipIf(!up)("sign-in attempts are limited per address (real server, Redis)", () => {
  let app: DashboardApp;
  const signIn = (secret: string) => signInTo(app, secret);

  beforeAll(async () => {
    app = await startDashboardApp({}, { githubSignIn: true });
  });
  afterAll(async () => {
    await app?.close();
  });

  it(`the wrong secret ${FAILED_SIGN_INS + 1} times: 429 with Retry-After, then the right one too`, async () => {
    // A successful sign-in does not count against the address.
    expect((await signIn(DASHBOARD_SECRET)).status).toBe(303);
    for (let attempt = 1; attempt <= FAILED_SIGN_INS; attempt++) {
      // Without AGENT_FIX_TRUST_PROXY a client's own X-Forwarded-For changes nothing.
      const forged = await signInTo(app, `wrong-secret-${attempt}-0123456789`, `198.51.100.${attempt}`);
      expect(forged.status, `attempt ${attempt}`).toBe(401);
    }
    expect((await signInTo(app, "wrong-secret-x-0123456789", "198.51.100.99")).status).toBe(429);
    const limited = await signIn("wrong-secret-last-0123456789");
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(await limited.text()).toContain("Too many sign-in attempts");
    // Locked out for the window, whatever the secret; GitHub's callback shares the count.
    expect((await signIn(DASHBOARD_SECRET)).status).toBe(429);
    const callback = await fetch(`${app.url}/dashboard/callback?code=x&state=y`, { redirect: "manual" });
    expect(callback.status).toBe(429);
    // Starting a GitHub sign-in has a count of its own.
    expect((await fetch(`${app.url}/dashboard/login`, { redirect: "manual" })).status).toBe(302);
  });
});

// The proxy named by its address, or counted as the one hop in front of the server.
describe.skipIf(!up).each(["loopback", "1"])(
  "behind a proxy (AGENT_FIX_TRUST_PROXY=%s), sign-ins are limited per client",
  (trust) => {
    let app: DashboardApp;
    // The test's connections come from 127.0.0.1: the proxy, which appends the client's address.
    const viaProxy = (secret: string, client: string) => signInTo(app, secret, client);

    beforeAll(async () => {
      app = await startDashboardApp({ AGENT_FIX_TRUST_PROXY: trust });
    });
    afterAll(async () => {
      await app?.close();
    });

    it("one client's failures lock out that client only, whatever it forges in front", async () => {
      const [alice, bob] = ["203.0.113.10", "203.0.113.20"];
      for (let attempt = 1; attempt <= FAILED_SIGN_INS; attempt++) {
        expect(
          (await viaProxy(`wrong-secret-${attempt}-0123456789`, alice)).status,
          `attempt ${attempt}`,
        ).toBe(401);
      }
      expect((await viaProxy(DASHBOARD_SECRET, alice)).status).toBe(429);
      // Her own X-Forwarded-For, which the proxy appends her address to, is not believed.
      expect((await viaProxy(DASHBOARD_SECRET, `198.51.100.1, ${alice}`)).status).toBe(429);
      // Another client behind the same proxy has a count of its own.
      expect((await viaProxy("wrong-secret-bob-0123456789", bob)).status).toBe(401);
      expect((await viaProxy(DASHBOARD_SECRET, bob)).status).toBe(303);
    });
  },
);
