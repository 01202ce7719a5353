/**
 * The worker's /healthz, as `npm run start:worker` serves it (AGENT_FIX_WORKER_PORT): 200 when the
 * Docker engine answers, the sandbox image is on it and Redis answers; 503 naming the one that is not.
 * Redis is a private one the test stops (the shared one is never touched); an engine that does not
 * answer is a DOCKER_HOST with no engine behind it; a missing image, a tag never built.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedWorker, startWorkerFromEnv } from "../../../worker/main.js";
import { GitHubServer } from "../../support/github-server.js";
import { OwnRedis } from "../../support/own-redis.js";
import { requireRedis, requireSandboxImage } from "../../support/services.js";

const ready = (await requireRedis()) && (await requireSandboxImage());

describe.runIf(ready)("the worker's /healthz", () => {
  const github = new GitHubServer();
  let redis: OwnRedis;
  let dir: string;
  const workers: StartedWorker[] = [];

  const startWorker = async (extra: Record<string, string> = {}) => {
    const worker = await startWorkerFromEnv({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ID: String(github.appId),
      PRIVATE_KEY: github.keys.privateKeyPem,
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      AGENT_FIX_REDIS_URL: redis.url,
      AGENT_FIX_QUEUE_PREFIX: "af-health",
      AGENT_FIX_GITHUB_THROTTLE: "false",
      AGENT_FIX_WORKER_TAG: "af-health",
      AGENT_FIX_TRAJECTORY_DIR: dir,
      AGENT_FIX_WORK_DIR: dir,
      AGENT_FIX_WORKER_PORT: "0",
      LOG_LEVEL: "error",
      ...extra,
    });
    workers.push(worker);
    return worker;
  };
  const health = async (worker: StartedWorker) => {
    const response = await fetch(`${worker.ops!.url}/healthz`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    await github.start();
    redis = await OwnRedis.start(["--appendonly", "no", "--save", ""]);
    dir = await mkdtemp(join(tmpdir(), "af-health-"));
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop().catch(() => {});
    await redis.remove();
    await github.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 200 with every check ok, then 503 naming Redis once Redis stops", async () => {
    const worker = await startWorker();
    expect(await health(worker)).toEqual({
      status: 200,
      body: { status: "ok", docker: "ok", sandboxImage: "ok", image: expect.any(String), redis: "ok" },
    });
    await redis.stop();
    try {
      expect(await health(worker)).toMatchObject({
        status: 503,
        body: { status: "degraded", docker: "ok", sandboxImage: "ok", redis: "down" },
      });
    } finally {
      await redis.start();
    }
    // ioredis reconnects on its own: healthy again without a restart of the worker.
    for (let i = 0; i < 100 && (await health(worker)).status !== 200; i++) await sleep(100);
    expect((await health(worker)).status).toBe(200);
  });

  it("answers 503 naming the sandbox image when it is not on the engine", async () => {
    const worker = await startWorker({ AGENT_FIX_SANDBOX_IMAGE: "agent-fix-sandbox:never-built-health" });
    expect(await health(worker)).toEqual({
      status: 503,
      body: {
        status: "degraded",
        docker: "ok",
        sandboxImage: "missing",
        image: "agent-fix-sandbox:never-built-health",
        redis: "ok",
      },
    });
  });

  it("answers 503 naming the Docker engine when it does not answer", async () => {
    // dockerode reads DOCKER_HOST from the process when the provider is built.
    const previous = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = `unix://${join(dir, "no-engine.sock")}`;
    try {
      const worker = await startWorker();
      expect(await health(worker)).toMatchObject({
        status: 503,
        body: { status: "degraded", docker: "down", sandboxImage: "down", redis: "ok" },
      });
    } finally {
      if (previous === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = previous;
    }
  });

  it("is not served without AGENT_FIX_WORKER_PORT", async () => {
    // An empty variable counts as unset, as everywhere in the worker's environment.
    const worker = await startWorker({ AGENT_FIX_WORKER_PORT: "" });
    expect(worker.ops).toBeUndefined();
  });
});
