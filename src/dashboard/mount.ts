/** The dashboard as the server mounts it: on only with AGENT_FIX_DASHBOARD_SECRET, never open by default. */
import type { Queue } from "bullmq";
import type { Env } from "../config/env.js";
import type { TrajectoryStore } from "../trajectory-store.js";
import { createDashboard, type DashboardHandler } from "./index.js";

export function dashboardFor(
  env: Env,
  queue: Queue,
  store: TrajectoryStore,
  log: { info(message: string): void },
): DashboardHandler {
  const path = env.AGENT_FIX_DASHBOARD_PATH;
  if (!env.AGENT_FIX_DASHBOARD_SECRET) {
    log.info(
      `dashboard off: set AGENT_FIX_DASHBOARD_SECRET (e.g. \`openssl rand -hex 32\`) to serve it under ${path}`,
    );
    return async () => false;
  }
  log.info(`dashboard on under ${path} (sign in with AGENT_FIX_DASHBOARD_SECRET)`);
  const secure = env.PUBLIC_URL?.startsWith("https:") ?? false;
  return createDashboard({ secret: env.AGENT_FIX_DASHBOARD_SECRET, path, secure, queue, store });
}
