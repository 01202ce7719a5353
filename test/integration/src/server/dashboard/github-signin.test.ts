/**
 * "Sign in with GitHub" over real HTTP: the dashboard, the GitHub stand-in's OAuth web flow and user
 * tokens, Redis. alice can write octo/calc, mallory can read octo/secret only, boss is an operator
 * (AGENT_FIX_DASHBOARD_OPERATORS); each sees exactly the runs GitHub lets them see.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisAvailable } from "../../../../support/redis.js";
import { type DashboardApp, RUNS, SECRET_RUN, startDashboardApp } from "./dashboard-app.js";

const up = await redisAvailable();

describe.skipIf(!up)("dashboard: sign in with GitHub (stand-in OAuth, real Redis)", () => {
  let app: DashboardApp;
  const get = (url: string, cookie = "") =>
    fetch(url.startsWith("http") ? url : `${app.url}${url}`, { headers: { cookie }, redirect: "manual" });
  const cookieOf = (answer: Response, name: string) =>
    answer.headers
      .getSetCookie()
      .map((line) => line.split(";")[0] ?? "")
      .find((pair) => pair.startsWith(`${name}=`)) ?? "";

  /** The dashboard's login, GitHub's authorize page (signed in as `login`), and the callback URL. */
  async function startFlow(login: string) {
    const start = await get("/dashboard/login");
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("location") ?? "");
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${app.github.url}/login/oauth/authorize`);
    expect(authorize.searchParams.get("client_id")).toBe(app.github.oauth.clientId);
    const approved = await get(authorize.toString(), app.github.oauth.signInBrowser(login));
    expect(approved.status).toBe(302);
    return {
      callback: approved.headers.get("location") ?? "",
      stateCookie: cookieOf(start, "agent_fix_oauth_state"),
    };
  }

  async function signIn(login: string): Promise<string> {
    const { callback, stateCookie } = await startFlow(login);
    const done = await get(callback, stateCookie);
    expect(done.status, await done.clone().text()).toBe(303);
    return cookieOf(done, "agent_fix_dashboard_gh");
  }

  beforeAll(async () => {
    app = await startDashboardApp({ AGENT_FIX_DASHBOARD_OPERATORS: "Boss" }, { githubSignIn: true });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("offers GitHub on the sign-in page", async () => {
    const page = await (await get("/dashboard/")).text();
    expect(page).toContain('href="/dashboard/login"');
  });

  it("alice sees octo/calc's runs and opens one, but not octo/secret's, even by URL", async () => {
    const cookie = await signIn("alice");
    const list = await (await get("/dashboard/", cookie)).text();
    expect(list).toContain(`href="/dashboard/runs/${RUNS.gate}"`);
    expect(list).toContain("octo/calc#3");
    expect(list).not.toContain(SECRET_RUN);
    expect((await get(`/dashboard/runs/${RUNS.gate}`, cookie)).status).toBe(200);
    const guessed = await get(`/dashboard/runs/${SECRET_RUN}`, cookie);
    const missing = await get("/dashboard/runs/octo-secret-9-1", cookie);
    expect(guessed.status).toBe(404);
    // Told apart from a run that does not exist by nothing but the name.
    expect((await guessed.text()).replace(SECRET_RUN, "X")).toBe(
      (await missing.text()).replace("octo-secret-9-1", "X"),
    );
  });

  it("mallory sees only octo/secret's run; the queue is for operators only", async () => {
    const cookie = await signIn("mallory");
    const list = await (await get("/dashboard/", cookie)).text();
    expect(list).toContain(`href="/dashboard/runs/${SECRET_RUN}"`);
    expect(list).not.toContain(RUNS.gate);
    expect(list).not.toContain('href="/dashboard/queue"');
    for (const run of [RUNS.gate, RUNS.hostile])
      expect((await get(`/dashboard/runs/${run}`, cookie)).status).toBe(404);
    expect((await get(`/dashboard/runs/${SECRET_RUN}`, cookie)).status).toBe(200);
    for (const path of ["/dashboard/queue", "/dashboard/queue/api/queues"]) {
      expect((await get(path, cookie)).status, path).toBe(403);
    }
  });

  it("an operator login (AGENT_FIX_DASHBOARD_OPERATORS) sees every run and the queue", async () => {
    const cookie = await signIn("boss");
    const list = await (await get("/dashboard/", cookie)).text();
    expect(list).toContain(RUNS.gate);
    expect(list).toContain(SECRET_RUN);
    expect((await get("/dashboard/queue/api/queues", cookie)).status).toBe(200);
  });

  it("the user's token stays in Redis with a TTL, never in the cookie, and signing out deletes it", async () => {
    const before = new Set(app.github.oauth.userTokens.keys());
    const cookie = await signIn("alice");
    const token = [...app.github.oauth.userTokens.keys()].find((t) => !before.has(t)) ?? "";
    expect(token).toMatch(/^ghu_/);
    expect(cookie).not.toContain(token);
    const redis = app.web.server.queue.redis;
    const keys = await redis.keys(`${app.web.prefix}:dashboard:session:*`);
    const holding = [];
    for (const key of keys) if ((await redis.get(key))?.includes(token)) holding.push(key);
    expect(holding).toHaveLength(1);
    expect(await redis.ttl(holding[0] ?? "")).toBeGreaterThan(0);
    const out = await fetch(`${app.url}/dashboard/logout`, {
      method: "POST",
      headers: { cookie },
      redirect: "manual",
    });
    expect(out.status).toBe(303);
    expect(await redis.exists(holding[0] ?? "")).toBe(0);
    expect((await get("/dashboard/", cookie)).status).toBe(401);
  });

  it("a forged, replayed or other browser's state is refused before any code is exchanged", async () => {
    const { callback, stateCookie } = await startFlow("mallory");
    const url = new URL(callback);
    const state = url.searchParams.get("state") ?? "";
    const exchanges = app.github.oauth.exchanges.length;
    const forged = new URL(url);
    forged.searchParams.set("state", `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`);
    const refused = await get(forged.toString(), stateCookie);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("the sign-in state is forged");
    // The victim's browser does not hold the attacker's state cookie (login CSRF).
    expect(await (await get(callback)).text()).toContain("started in another browser");
    expect(app.github.oauth.exchanges.length).toBe(exchanges);
    expect((await get(callback, stateCookie)).status).toBe(303);
    const replayed = await get(callback, stateCookie);
    expect(replayed.status).toBe(403);
    expect(await replayed.text()).toContain("already used");
    expect(app.github.oauth.exchanges.length).toBe(exchanges + 1);
  });

  it("a code GitHub does not know is refused with GitHub's bad_verification_code", async () => {
    const { callback, stateCookie } = await startFlow("alice");
    const url = new URL(callback);
    url.searchParams.set("code", "0123456789abcdef0123");
    const refused = await get(url.toString(), stateCookie);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain(
      "bad_verification_code (The code passed is incorrect or expired.)",
    );
    expect(app.github.oauth.exchanges.at(-1)).toBe("bad_verification_code");
  });

  it("a user token that expired (8 hours) is refreshed on GitHub's 401: the viewer keeps her runs", async () => {
    const cookie = await signIn("alice");
    const refreshed = app.github.oauth.exchanges.filter((e) => e === "refreshed").length;
    app.github.oauth.expireUserTokens("alice");
    const list = await (await get("/dashboard/", cookie)).text();
    expect(list).toContain(`href="/dashboard/runs/${RUNS.gate}"`);
    expect(list).not.toContain(SECRET_RUN);
    expect(app.github.oauth.exchanges.filter((e) => e === "refreshed").length).toBe(refreshed + 1);
    // The new token is kept: the next request needs no refresh.
    expect((await get(`/dashboard/runs/${RUNS.hostile}`, cookie)).status).toBe(200);
    expect(app.github.oauth.exchanges.filter((e) => e === "refreshed").length).toBe(refreshed + 1);
  });

  it("a token about to expire is refreshed before it is used; a refused refresh ends the session", async () => {
    app.github.oauth.userTokenSeconds = 120;
    try {
      const cookie = await signIn("alice");
      const before = app.github.oauth.exchanges.length;
      expect((await get(`/dashboard/runs/${RUNS.gate}`, cookie)).status).toBe(200);
      expect(app.github.oauth.exchanges.slice(before)).toEqual(["refreshed"]);
      // The refresh token revoked (the user revoked the app): the session ends at the next refresh.
      app.github.oauth.refreshTokens.clear();
      expect((await get("/dashboard/", cookie)).status).toBe(401);
      expect(app.github.oauth.exchanges.at(-1)).toBe("bad_refresh_token");
    } finally {
      app.github.oauth.userTokenSeconds = 8 * 60 * 60;
    }
  });

  it("two tabs on two server processes refreshing at once share one refresh; the session lives on", async () => {
    app.github.oauth.userTokenSeconds = 120;
    const cookie = await signIn("alice");
    // The refreshed token lives GitHub's 8 hours: after the one refresh, no request needs another.
    app.github.oauth.userTokenSeconds = 8 * 60 * 60;
    const twin = await app.twin();
    const before = app.github.oauth.exchanges.length;
    const pages = [app.url, twin, app.url, twin].map((base) =>
      fetch(`${base}/dashboard/runs/${RUNS.gate}`, { headers: { cookie }, redirect: "manual" }),
    );
    const statuses = (await Promise.all(pages)).map((answer) => answer.status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(app.github.oauth.exchanges.slice(before)).toEqual(["refreshed"]);
    for (const base of [app.url, twin]) {
      const list = await fetch(`${base}/dashboard/`, { headers: { cookie } });
      expect(list.status).toBe(200);
      expect(await list.text()).toContain(`href="/dashboard/runs/${RUNS.gate}"`);
    }
    expect(app.github.oauth.exchanges.slice(before)).toEqual(["refreshed"]);
  });

  it("the stand-in answers the token exchange as GitHub documents it", async () => {
    const exchange = (body: Record<string, string>) =>
      fetch(`${app.github.url}/login/oauth/access_token`, {
        method: "POST",
        headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body),
      });
    const wrongClient = await exchange({ client_id: "Iv23linope", client_secret: "nope", code: "x" });
    expect(wrongClient.status).toBe(200);
    expect(await wrongClient.json()).toEqual({
      error: "incorrect_client_credentials",
      error_description: "The client_id and/or client_secret passed are incorrect.",
      error_uri:
        "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials",
    });
    const badRefresh = await exchange({
      client_id: app.github.oauth.clientId,
      client_secret: app.github.oauth.clientSecret,
      grant_type: "refresh_token",
      refresh_token: "ghr_unknown",
    });
    expect(await badRefresh.json()).toEqual({
      error: "bad_refresh_token",
      error_description: "The refresh token passed is incorrect or expired.",
      error_uri:
        "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-refresh-token",
    });
    const user = await fetch(`${app.github.apiUrl}/user`, {
      headers: { authorization: "Bearer ghu_unknown" },
    });
    expect(user.status).toBe(401);
  });
});
