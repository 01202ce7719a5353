/**
 * The real webhook server with its dashboard on (AGENT_FIX_DASHBOARD_SECRET), the GitHub stand-in, one
 * labelled issue queued through a signed webhook, and the fixture trajectories stored in Redis the way
 * the worker stores them. Shared by the HTTP and the browser tests of the dashboard.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Trajectory } from "../../../src/contracts.js";
import { createTrajectoryStore } from "../../../src/trajectory-store.js";
import { type GitHubServer, startGitHubServer } from "../../support/github-server.js";
import { startWebhookApp, type WebhookApp } from "../../support/webhook-app.js";
import { labelEvent } from "../../support/webhooks.js";

export const WEBHOOK_SECRET = "dashboard-webhook-secret";
export const DASHBOARD_SECRET = "dashboard-operator-secret-0123456789";
/** The stored runs: the gate failing once then passing, and a hostile model's markup. */
export const RUNS = { gate: "octo-calc-3-1700000000000", hostile: "octo-calc-4-1700000100000" } as const;

export interface DashboardApp {
  url: string;
  github: GitHubServer;
  web: WebhookApp;
  close(): Promise<void>;
}

async function fixtureTrajectory(name: string): Promise<Trajectory> {
  const path = join(import.meta.dirname, "../../fixtures/dashboard", name);
  return JSON.parse(await readFile(path, "utf8")) as Trajectory;
}

export async function startDashboardApp(env: Record<string, string> = {}): Promise<DashboardApp> {
  const github = await startGitHubServer();
  await github.addRepo({
    owner: "octo",
    name: "calc",
    files: { "README.md": "x\n" },
    permissions: { alice: "write" },
  });
  const web = await startWebhookApp({
    github,
    secret: WEBHOOK_SECRET,
    env: { AGENT_FIX_DASHBOARD_SECRET: DASHBOARD_SECRET, ...env },
  });
  const store = createTrajectoryStore(web.server.queue.redis, {
    prefix: web.prefix,
    retentionDays: 1,
    maxBytes: 1 << 20,
  });
  await store.save(
    RUNS.gate,
    { repo: "octo/calc", issue: 3, trigger: "label" },
    await fixtureTrajectory("gate-fails-once.traj"),
  );
  await store.save(
    RUNS.hostile,
    { repo: "octo/calc", issue: 4, trigger: "label" },
    await fixtureTrajectory("hostile-markup.traj"),
  );
  const issue = github.addIssue("octo", "calc", { title: "mean() crashes", body: "on []" }).number;
  const status = await web.post(
    labelEvent(github, { owner: "octo", repo: "calc", issue }, "labeled", "agent-fix", { login: "alice" }),
  );
  if (status !== 200) throw new Error(`the label webhook got ${status}`);
  return {
    url: web.server.url,
    github,
    web,
    async close() {
      await web.close();
      await github.stop();
    },
  };
}
