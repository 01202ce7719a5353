/**
 * Hostile: a repository's runs are visible by the repository's id, never by its name. olive's
 * octo/ledger has a run, stored as the worker stores it (its trajectory sink, from the job's data); the
 * repository is deleted and mallory's account re-creates octo/ledger (a new id, another installation),
 * where she is admin. Signed in, she must not see the old run, in the list or by URL; olive, who
 * could read the old repository, still sees it after a rename of that same repository.
 * Real HTTP, real Redis, the GitHub stand-in's OAuth flow and user tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseFixJobData } from "../../../../../src/shared/queue/index.js";
import { createTrajectoryStore } from "../../../../../src/shared/trajectory-store.js";
import { storeTrajectories } from "../../../../../worker/run/solve/trajectory-sink.js";
import { silentLogger } from "../../../../support/logs.js";
import { redisAvailable } from "../../../../support/redis.js";
import { type DashboardApp, fixtureTrajectory, startDashboardApp } from "./dashboard-app.js";

const up = await redisAvailable();
const RUN = "octo-ledger-5-1700000300000";

describe.skipIf(!up)("dashboard: a run is seen by its repository's id, not its name", () => {
  let app: DashboardApp;
  let oldId = 0;
  const get = (path: string, cookie = "") =>
    fetch(`${app.url}${path}`, { headers: { cookie }, redirect: "manual" });

  async function signIn(login: string): Promise<string> {
    const start = await get("/dashboard/login");
    const state = start.headers.getSetCookie().find((c) => c.startsWith("agent_fix_oauth_state="));
    const approved = await fetch(start.headers.get("location") ?? "", {
      headers: { cookie: app.github.oauth.signInBrowser(login) },
      redirect: "manual",
    });
    const done = await fetch(approved.headers.get("location") ?? "", {
      headers: { cookie: state?.split(";")[0] ?? "" },
      redirect: "manual",
    });
    expect(done.status, await done.clone().text()).toBe(303);
    const session = done.headers.getSetCookie().find((c) => c.startsWith("agent_fix_dashboard_gh="));
    return session?.split(";")[0] ?? "";
  }

  const sees = async (cookie: string) => ({
    listed: (await (await get("/dashboard/", cookie)).text()).includes(RUN),
    opened: (await get(`/dashboard/runs/${RUN}`, cookie)).status,
  });

  beforeAll(async () => {
    app = await startDashboardApp({}, { githubSignIn: true });
    const old = await app.github.addRepo({
      owner: "octo",
      name: "ledger",
      files: { "README.md": "x\n" },
      installationId: 1,
      permissions: { olive: "admin" },
    });
    oldId = old.id;
    const store = createTrajectoryStore(app.web.server.queue.redis, {
      prefix: app.web.prefix,
      retentionDays: 1,
      maxBytes: 1 << 20,
    });
    const job = parseFixJobData({
      installationId: 1,
      owner: "octo",
      repo: "ledger",
      repoId: old.id,
      issueNumber: 5,
      requestedBy: "olive",
      trigger: "label",
      deliveryId: "d-ledger-5",
    });
    const trajectory = await fixtureTrajectory("gate-fails-once.traj");
    await storeTrajectories(store, silentLogger())(job, RUN)(trajectory);
  });
  afterAll(async () => {
    await app?.close();
  });

  it("the new holder of a deleted repository's name does not see its runs; its reader does, renamed", async () => {
    const olive = await signIn("olive");
    expect(await sees(olive)).toEqual({ listed: true, opened: 200 });

    await app.github.deleteRepo("octo", "ledger");
    const taken = await app.github.addRepo({
      owner: "octo",
      name: "ledger",
      files: { "README.md": "mallory's\n" },
      installationId: 2,
      permissions: { mallory: "admin" },
    });
    expect(taken.id).not.toBe(oldId);
    const mallory = await signIn("mallory");
    expect(await sees(mallory)).toEqual({ listed: false, opened: 404 });

    // The same repository renamed keeps its id: whoever can read it still sees its runs.
    await app.github.deleteRepo("octo", "ledger");
    await app.github.addRepo({
      owner: "octo",
      name: "ledger-books",
      files: { "README.md": "x\n" },
      installationId: 1,
      permissions: { olive: "admin" },
    });
    const renamed = app.github.state.repo("octo", "ledger-books");
    if (renamed) renamed.id = oldId;
    // A new session: the former one's answers are cached for a minute.
    expect(await sees(await signIn("olive"))).toEqual({ listed: true, opened: 200 });
  });
});
