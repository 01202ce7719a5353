/**
 * The dashboard as the server mounts it: on only with AGENT_FIX_DASHBOARD_SECRET or the GitHub App's
 * GITHUB_CLIENT_ID/GITHUB_CLIENT_SECRET ("Sign in with GitHub"), never open by default.
 */
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { type Env, githubApiUrl, githubWebUrl } from "../../shared/config/env.js";
import { ConfigError } from "../../shared/errors.js";
import type { TrajectoryStore } from "../../shared/trajectory-store.js";
import type { GitHubSignInConfig } from "./github-session.js";
import { createDashboard, type DashboardHandler } from "./index.js";
import { signInLimits } from "./sign-in-limit.js";

export function dashboardFor(
  env: Env,
  queue: Queue,
  store: TrajectoryStore,
  log: { info(message: string): void },
  redis: Redis,
): DashboardHandler {
  const path = env.AGENT_FIX_DASHBOARD_PATH;
  const github = githubSignIn(env, redis);
  if (!env.AGENT_FIX_DASHBOARD_SECRET && !github) {
    log.info(
      `dashboard off: set AGENT_FIX_DASHBOARD_SECRET (e.g. \`openssl rand -hex 32\`) or the GitHub App's GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET to serve it under ${path}`,
    );
    return async () => false;
  }
  const methods = [
    env.AGENT_FIX_DASHBOARD_SECRET ? "AGENT_FIX_DASHBOARD_SECRET" : "",
    github ? "GitHub" : "",
  ];
  log.info(`dashboard on under ${path} (sign in with ${methods.filter(Boolean).join(" or ")})`);
  const secure = env.PUBLIC_URL?.startsWith("https:") ?? false;
  return createDashboard({
    ...(env.AGENT_FIX_DASHBOARD_SECRET ? { secret: env.AGENT_FIX_DASHBOARD_SECRET } : {}),
    ...(github ? { github } : {}),
    path,
    secure,
    queue,
    store,
    limits: signInLimits(redis, env.AGENT_FIX_QUEUE_PREFIX, env.AGENT_FIX_TRUST_PROXY),
  });
}

function githubSignIn(env: Env, redis: Redis): GitHubSignInConfig | undefined {
  const { GITHUB_CLIENT_ID: clientId, GITHUB_CLIENT_SECRET: clientSecret } = env;
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret) {
    throw new ConfigError(
      "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together (the GitHub App's settings page shows the client id and generates client secrets); set both for sign-in with GitHub, or neither",
    );
  }
  return {
    clientId,
    clientSecret,
    webUrl: githubWebUrl(env),
    apiUrl: githubApiUrl(env),
    ...(env.PUBLIC_URL ? { publicUrl: env.PUBLIC_URL } : {}),
    operators: env.AGENT_FIX_DASHBOARD_OPERATORS,
    redis,
    keyPrefix: env.AGENT_FIX_QUEUE_PREFIX,
  };
}
