/**
 * The real webhook server with its dashboard on (AGENT_FIX_DASHBOARD_SECRET), the GitHub stand-in, one
 * labelled issue queued through a signed webhook, and the fixture trajectories stored in Redis the way
 * the worker stores them. Shared by the HTTP and the browser tests of the dashboard.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Trajectory } from "../../../../../src/shared/contracts.js";
import { createTrajectoryStore } from "../../../../../src/shared/trajectory-store.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { startWebhookApp, type WebhookApp } from "../../../../support/webhook-app.js";
import { labelEvent } from "../../../../support/webhooks.js";

export const WEBHOOK_SECRET = "dashboard-webhook-secret";
export const DASHBOARD_SECRET = "dashboard-operator-secret-0123456789";
/** The stored runs: the gate failing once then passing, and a hostile model's markup. */
export const RUNS = { gate: "octo-calc-3-1700000000000", hostile: "octo-calc-4-1700000100000" } as const;
/** With GitHub sign-in: a run of octo/secret, which only mallory (read) and the operator may see. */
export const SECRET_RUN = "octo-secret-9-1700000200000";

export interface DashboardApp {
  url: string;
  github: GitHubServer;
  web: WebhookApp;
  /** Starts another server process of the same deployment (same Redis prefix and environment); its URL. */
  twin(): Promise<string>;
  close(): Promise<void>;
}

/** When the fixtures were recorded: their start times are moved to as long before now. */
const RECORDED = Date.parse("2026-12-01T17:00:00Z");

/**
 * A recorded trajectory, started as long before an hour ago as it was before RECORDED: the store
 * forgets runs older than its retention (a day here), so a fixture's own date would expire it.
 */
export async function fixtureTrajectory(name: string): Promise<Trajectory> {
  const path = join(import.meta.dirname, "../../../../fixtures/dashboard", name);
  const trajectory = JSON.parse(await readFile(path, "utf8")) as Trajectory;
  const started = Date.parse(trajectory.info.started_at ?? "");
  if (Number.isFinite(started)) {
    const shifted = Date.now() - 3_600_000 - (RECORDED - started);
    trajectory.info.started_at = new Date(shifted).toISOString();
  }
  return trajectory;
}

interface DashboardAppOptions {
  /** "Sign in with GitHub" through the stand-in's OAuth flow (GITHUB_CLIENT_ID/SECRET), and octo/secret. */
  githubSignIn?: boolean;
}

export async function startDashboardApp(
  env: Record<string, string> = {},
  options: DashboardAppOptions = {},
): Promise<DashboardApp> {
  const github = await startGitHubServer();
  const oauthEnv = options.githubSignIn
    ? { GITHUB_CLIENT_ID: github.oauth.clientId, GITHUB_CLIENT_SECRET: github.oauth.clientSecret }
    : {};
  const calc = await github.addRepo({
    owner: "octo",
    name: "calc",
    files: { "README.md": "x\n" },
    permissions: { alice: "write" },
  });
  const appEnv = { AGENT_FIX_DASHBOARD_SECRET: DASHBOARD_SECRET, ...oauthEnv, ...env };
  const web = await startWebhookApp({ github, secret: WEBHOOK_SECRET, env: appEnv });
  const twins: WebhookApp[] = [];
  // The GitHub App's registered callback URL.
  github.oauth.callbackUrls = [`${web.server.url}/dashboard/callback`];
  const store = createTrajectoryStore(web.server.queue.redis, {
    prefix: web.prefix,
    retentionDays: 1,
    maxBytes: 1 << 20,
  });
  await store.save(
    RUNS.gate,
    { repo: "octo/calc", repoId: calc.id, issue: 3, trigger: "label" },
    await fixtureTrajectory("gate-fails-once.traj"),
  );
  await store.save(
    RUNS.hostile,
    { repo: "octo/calc", repoId: calc.id, issue: 4, trigger: "label" },
    await fixtureTrajectory("hostile-markup.traj"),
  );
  if (options.githubSignIn) {
    const secret = await github.addRepo({
      owner: "octo",
      name: "secret",
      files: { "README.md": "x\n" },
      permissions: { mallory: "read" },
    });
    await store.save(
      SECRET_RUN,
      { repo: "octo/secret", repoId: secret.id, issue: 9, trigger: "label" },
      await fixtureTrajectory("gate-fails-once.traj"),
    );
  }
  const issue = github.addIssue("octo", "calc", { title: "mean() crashes", body: "on []" }).number;
  const status = await web.post(
    labelEvent(github, { owner: "octo", repo: "calc", issue }, "labeled", "agent-fix", { login: "alice" }),
  );
  if (status !== 200) throw new Error(`the label webhook got ${status}`);
  return {
    url: web.server.url,
    github,
    web,
    async twin() {
      const twin = await startWebhookApp({ github, secret: WEBHOOK_SECRET, prefix: web.prefix, env: appEnv });
      twins.push(twin);
      return twin.server.url;
    },
    async close() {
      for (const twin of twins) await twin.close();
      await web.close();
      await github.stop();
    },
  };
}
