import { createProbot } from "probot";
import { throttledOctokit, WORKER_THROTTLE } from "../../src/github/throttle.js";
import type { WorkerSettings } from "./built-worker.js";

/** The worker's GitHub App client (installation tokens, throttled writes). */
export function probotFromSettings(settings: WorkerSettings) {
  return createProbot({
    // Rate limits are waited out; client-side spacing of writes (off for the stand-ins) is shared by
    // every process of the deployment through its Redis (Probot's REDIS_URL).
    overrides: {
      Octokit: throttledOctokit({
        id: `agent-fix-${settings.APP_ID}`,
        spacing: settings.AGENT_FIX_GITHUB_THROTTLE,
        ...WORKER_THROTTLE,
      }),
    },
    env: {
      ...(settings.AGENT_FIX_GITHUB_THROTTLE ? { REDIS_URL: settings.AGENT_FIX_REDIS_URL } : {}),
      APP_ID: String(settings.APP_ID),
      ...(settings.PRIVATE_KEY ? { PRIVATE_KEY: settings.PRIVATE_KEY } : {}),
      ...(settings.PRIVATE_KEY_PATH ? { PRIVATE_KEY_PATH: settings.PRIVATE_KEY_PATH } : {}),
      ...(settings.GHE_HOST ? { GHE_HOST: settings.GHE_HOST, GHE_PROTOCOL: settings.GHE_PROTOCOL } : {}),
      LOG_LEVEL: settings.LOG_LEVEL,
    },
  });
}
