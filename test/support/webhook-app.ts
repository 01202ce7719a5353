/**
 * The real Probot webhook server (src/server/app-server.ts) started for a test against the GitHub stand-in and
 * the test Redis, configured the way production reads its environment (parseEnv), with a queue key
 * prefix and a trajectory directory of its own. `close()` stops the server, drops the prefix's keys
 * and removes the directory; the stand-in belongs to the caller, who stops it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AppServer, startAppServer } from "../../src/server/app-server.js";
import { parseEnv } from "../../src/shared/config/env.js";
import { connectRedis } from "../../src/shared/queue/index.js";
import type { GitHubServer } from "./github-server.js";
import { dropPrefix, TEST_REDIS_URL, testPrefix } from "./redis.js";
import { type Delivery, deliver } from "./webhooks.js";

interface WebhookAppOptions {
  github: GitHubServer;
  /** WEBHOOK_SECRET; deliveries are signed with it. */
  secret: string;
  /** The queue key prefix; a fresh one when left out. */
  prefix?: string;
  /** Client-side GitHub throttling (production's default); off unless asked for. */
  throttle?: boolean;
  /** More environment, e.g. AGENT_FIX_LABEL_BOTS. */
  env?: Record<string, string>;
}

export interface WebhookApp {
  server: AppServer;
  prefix: string;
  trajectoryDir: string;
  /** POSTs a signed delivery to the webhook endpoint; returns the HTTP status. */
  post(delivery: Delivery): Promise<number>;
  close(): Promise<void>;
}

export async function startWebhookApp(options: WebhookAppOptions): Promise<WebhookApp> {
  const { github, secret } = options;
  const prefix = options.prefix ?? testPrefix();
  const trajectoryDir = await mkdtemp(join(tmpdir(), "af-traj-"));
  const server = await startAppServer(
    parseEnv({
      AGENT_FIX_TRAJECTORY_DIR: trajectoryDir,
      APP_ID: String(github.appId),
      PRIVATE_KEY: github.keys.privateKeyPem,
      WEBHOOK_SECRET: secret,
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      HOST: "127.0.0.1",
      PORT: "0",
      AGENT_FIX_REDIS_URL: TEST_REDIS_URL,
      AGENT_FIX_QUEUE_PREFIX: prefix,
      AGENT_FIX_GITHUB_THROTTLE: String(options.throttle ?? false),
      LOG_LEVEL: "fatal",
      ...options.env,
    }),
  ).catch(async (error: unknown) => {
    await rm(trajectoryDir, { recursive: true, force: true });
    throw error;
  });
  return {
    server,
    prefix,
    trajectoryDir,
    post: (delivery) => deliver(`${server.url}/api/github/webhooks`, secret, delivery),
    async close() {
      await server.close();
      const redis = await connectRedis(TEST_REDIS_URL, "producer");
      await dropPrefix(redis, prefix);
      redis.disconnect();
      await rm(trajectoryDir, { recursive: true, force: true });
    },
  };
}
