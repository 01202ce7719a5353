/**
 * Trajectories in an S3-compatible bucket (src/shared/trajectory-s3.ts) when the operator configures one: the
 * worker's sink writes the run's body there (its summary to Redis), the real webhook server's run page
 * reads it back; a missing object is "not found"; the retention period deletes the bodies of expired
 * runs; a wrong key, secret or bucket stops the server at start with what to fix. Against a real S3
 * server (test/support/s3-server.ts) that checks SigV4 signatures.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEnv } from "../../../../src/shared/config/env.js";
import type { Trajectory } from "../../../../src/shared/contracts.js";
import type { FixJobData } from "../../../../src/shared/queue/index.js";
import { connectRedis } from "../../../../src/shared/queue/index.js";
import { type S3Blobs, trajectoryBlobsFromEnv } from "../../../../src/shared/trajectory-s3.js";
import { createTrajectoryStore } from "../../../../src/shared/trajectory-store.js";
import { createWorkerLogger } from "../../../../worker/log.js";
import { storeTrajectories } from "../../../../worker/run/solve/trajectory-sink.js";
import { startGitHubServer } from "../../../support/github-server.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";
import { type S3StandIn, startS3StandIn } from "../../../support/s3-server.js";
import { startWebhookApp, type WebhookApp } from "../../../support/webhook-app.js";

const up = await redisAvailable();
const SECRET = "s3-dashboard-operator-secret-0123";
const DAY_MS = 24 * 60 * 60 * 1000;

const fixture = async (): Promise<Trajectory> =>
  JSON.parse(
    await readFile(join(import.meta.dirname, "../../../fixtures/dashboard/gate-fails-once.traj"), "utf8"),
  ) as Trajectory;

const job = (issueNumber: number) =>
  ({ owner: "octo", repo: "calc", issueNumber, trigger: "label" }) as FixJobData;

describe.skipIf(!up)("trajectories in an S3-compatible bucket", () => {
  let s3: S3StandIn;
  let redis: Redis;
  const prefix = testPrefix();
  const s3Env = () => ({
    AGENT_FIX_S3_BUCKET: s3.bucket,
    AGENT_FIX_S3_ENDPOINT: s3.url,
    AGENT_FIX_S3_PATH_STYLE: "true",
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AGENT_FIX_QUEUE_PREFIX: prefix,
  });
  /** The worker's store, built from its environment as worker/main.ts builds it. */
  const workerStore = async (retentionDays = 30) => {
    const blobs = (await trajectoryBlobsFromEnv(parseEnv(s3Env()))) as S3Blobs;
    return {
      blobs,
      store: createTrajectoryStore(redis, { prefix, retentionDays, maxBytes: 1 << 20, blobs }),
    };
  };

  beforeAll(async () => {
    s3 = await startS3StandIn();
    redis = await connectRedis(TEST_REDIS_URL, "producer");
  });
  afterAll(async () => {
    await dropPrefix(redis, prefix);
    redis.disconnect();
    await s3?.close();
  });

  it("the worker writes a run to the bucket; the server's run page reads it; a missing one is not found", async () => {
    const github = await startGitHubServer();
    let web: WebhookApp | undefined;
    try {
      web = await startWebhookApp({
        github,
        secret: "s3-webhook-secret",
        prefix,
        env: { ...s3Env(), AGENT_FIX_DASHBOARD_SECRET: SECRET },
      });
      const { blobs, store } = await workerStore();
      const sink = storeTrajectories(store, createWorkerLogger("fatal"))(job(3), "octo-calc-3-1");
      await sink(await fixture());
      expect(await s3.keys()).toContain(`${prefix}/trajectories/octo-calc-3-1.json.br`);
      expect(await redis.exists(`${prefix}:trajectory:octo-calc-3-1`)).toBe(0);

      const login = await fetch(`${web.server.url}/dashboard/login`, {
        method: "POST",
        body: new URLSearchParams({ secret: SECRET }),
        redirect: "manual",
      });
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
      const page = await fetch(`${web.server.url}/dashboard/runs/octo-calc-3-1`, { headers: { cookie } });
      expect(page.status).toBe(200);
      const text = await page.text();
      expect(text).toContain('<section class="step failing" id="step-3">');
      expect(text).toContain('<span class="add">+        return 0</span>');

      // Its summary is still listed, but the body is gone (a lifecycle rule, an operator's cleanup).
      await blobs.remove(["octo-calc-3-1"]);
      const gone = await fetch(`${web.server.url}/dashboard/runs/octo-calc-3-1`, { headers: { cookie } });
      expect(gone.status).toBe(404);
      expect(await gone.text()).toContain("older than the retention period");
      blobs.close();
    } finally {
      await web?.close();
      await github.stop();
    }
  });

  it("a run past the retention period loses its body at the next save", async () => {
    const base = await fixture();
    const startedDaysAgo = (days: number): Trajectory => ({
      ...base,
      info: { ...base.info, started_at: new Date(Date.now() - days * DAY_MS).toISOString() },
    });
    const month = await workerStore(30);
    await month.store.save("octo-calc-5-1", { repo: "octo/calc", issue: 5 }, startedDaysAgo(10));
    expect(await s3.keys()).toContain(`${prefix}/trajectories/octo-calc-5-1.json.br`);
    // The operator shortens the retention to a week: the 10-day-old run goes with the next save.
    const week = await workerStore(7);
    await week.store.save("octo-calc-6-1", { repo: "octo/calc", issue: 6 }, startedDaysAgo(0));
    const keys = await s3.keys();
    expect(keys).not.toContain(`${prefix}/trajectories/octo-calc-5-1.json.br`);
    expect(keys).toContain(`${prefix}/trajectories/octo-calc-6-1.json.br`);
    expect((await week.store.list()).map((run) => run.name)).not.toContain("octo-calc-5-1");
    month.blobs.close();
    week.blobs.close();
  });

  it("a wrong secret, access key or bucket stops the server at start, saying what to fix", async () => {
    const github = await startGitHubServer();
    const start = (env: Record<string, string>) =>
      startWebhookApp({ github, secret: "s3-webhook-secret", env: { ...s3Env(), ...env } });
    try {
      await expect(start({ AWS_SECRET_ACCESS_KEY: "not-the-secret" })).rejects.toMatchObject({
        code: "trajectory_store_refused",
        message: expect.stringContaining("SignatureDoesNotMatch"),
        hint: expect.stringContaining("AWS_SECRET_ACCESS_KEY is not the secret of AWS_ACCESS_KEY_ID"),
      });
      await expect(start({ AWS_ACCESS_KEY_ID: "AKIAUNKNOWN" })).rejects.toMatchObject({
        code: "trajectory_store_refused",
        message: expect.stringContaining("InvalidAccessKeyId"),
        hint: expect.stringContaining("does not know AWS_ACCESS_KEY_ID"),
      });
      await expect(start({ AGENT_FIX_S3_BUCKET: "no-such-bucket" })).rejects.toMatchObject({
        code: "trajectory_store_refused",
        hint: expect.stringContaining("The bucket does not exist"),
      });
    } finally {
      await github.stop();
    }
  });
});
