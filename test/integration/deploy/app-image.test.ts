/**
 * The app's image as docs/operating.md runs it: built by deploy/build-image.sh when its tag is missing
 * (its base bootstrapped from Debian's mirror, no image registry), then started once as the server and
 * once as the worker. Each answers /healthz, the image's own HEALTHCHECK turns healthy for both roles,
 * and the worker (as the image's user `node`, with the Docker socket) connects to Redis and takes jobs.
 * Host networking: the GitHub stand-in and Redis listen on this host's loopback.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitHubServer } from "../../support/github-server.js";
import { freePort } from "../../support/ports.js";
import { redisUrl, requireRedis, requireSandboxImage } from "../../support/services.js";
import { poll } from "../../support/stack-parts.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const ready = (await requireRedis()) && (await requireSandboxImage());

async function docker(...args: string[]): Promise<string> {
  return (await run("docker", args, { maxBuffer: 16 * 1024 * 1024 })).stdout.trim();
}

/** The container's own words, when a check of it failed. */
async function explain<T>(id: string, value: T, ok: boolean): Promise<T> {
  if (!ok) console.log(await docker("logs", "--tail", "30", id).catch((e: unknown) => String(e)));
  return value;
}

const healthz = (port: number) => async () =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }),
    () => ({ status: 0, body: {} }),
  );
/** The container's HEALTHCHECK verdict once it is past `starting`, with the probe's log when not healthy. */
async function settledHealth(id: string): Promise<string> {
  const state = await poll(
    () => docker("inspect", "-f", "{{.State.Health.Status}}", id),
    (s) => s !== "starting",
    240,
  );
  if (state !== "healthy") console.log(await docker("inspect", "-f", "{{json .State.Health}}", id));
  return state;
}

describe.runIf(ready)("the app's image, as server and as worker", () => {
  const github = new GitHubServer();
  const prefix = `af-image-${randomBytes(4).toString("hex")}`;
  const containers: string[] = [];
  let image = "";

  const start = async (role: "server" | "worker", env: Record<string, string>, extra: string[] = []) => {
    const vars = {
      AGENT_FIX_ROLE: role,
      APP_ID: String(github.appId),
      PRIVATE_KEY: github.keys.privateKeyPem,
      WEBHOOK_SECRET: "image-test-secret",
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      AGENT_FIX_REDIS_URL: redisUrl(),
      AGENT_FIX_QUEUE_PREFIX: prefix,
      AGENT_FIX_GITHUB_THROTTLE: "false",
      HOST: "127.0.0.1",
      ...env,
    };
    const id = await docker(
      "run",
      "-d",
      "--network",
      "host",
      // The image's HEALTHCHECK command, asked more often than its 30 s so the test need not wait, and
      // given longer to answer: on this shared 2-core machine a `docker exec node` took 15 s, some > 30 s.
      "--health-interval",
      "2s",
      "--health-timeout",
      "120s",
      "--health-start-period",
      "120s",
      "--label",
      `agent-fix.test=${prefix}`,
      ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
      ...extra,
      image,
    );
    containers.push(id);
    return id;
  };

  beforeAll(async () => {
    const started = Date.now();
    const built = await run("bash", [join(ROOT, "deploy/build-image.sh")], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    image = built.stdout.trim().split("\n").at(-1) ?? "";
    console.log(`app image ${image}: ready in ${Math.round((Date.now() - started) / 1000)} s`);
    await github.start();
  }, 45 * 60_000);

  afterAll(async () => {
    for (const id of containers) await docker("rm", "-f", id).catch(() => "");
    await github.stop();
  });

  it("as the server: /healthz answers 200 with Redis ok, and the HEALTHCHECK says healthy", async () => {
    const port = await freePort();
    const id = await start("server", { PORT: String(port) });
    const health = await poll(healthz(port), (h) => h.status === 200, 180);
    await explain(id, health, health.status === 200);
    expect(health).toEqual({ status: 200, body: { status: "ok", redis: "ok" } });
    expect(await settledHealth(id)).toBe("healthy");
  }, 600_000);

  it("as the worker: /healthz answers with engine, image and Redis ok, it takes jobs from Redis, and it is healthy", async () => {
    const port = await freePort();
    const socketGroup = String(statSync("/var/run/docker.sock").gid);
    const id = await start("worker", { AGENT_FIX_WORKER_PORT: String(port), AGENT_FIX_WORKER_TAG: prefix }, [
      "-v",
      "/var/run/docker.sock:/var/run/docker.sock",
      "--group-add",
      socketGroup,
    ]);
    // Slow on a loaded machine: tsx compiles the worker's sources at start.
    const health = await poll(healthz(port), (h) => h.status === 200, 180);
    await explain(id, health, health.status === 200);
    expect(health).toMatchObject({
      status: 200,
      body: { status: "ok", docker: "ok", sandboxImage: "ok", redis: "ok" },
    });
    // A BullMQ worker names its Redis connection after the queue: the queue lists it.
    const queue = new Queue("agent-fix", { connection: { url: redisUrl() } as never, prefix });
    try {
      const workers = await poll(
        () => queue.getWorkers(),
        (list) => list.length > 0,
        60,
      );
      expect(workers.length).toBe(1);
    } finally {
      await queue.close();
    }
    expect(await settledHealth(id)).toBe("healthy");
    // It runs as `node` and could make its trajectory directory (the old image's worker exited here).
    expect(await docker("exec", id, "id", "-un")).toBe("node");
    expect(await docker("exec", id, "stat", "-c", "%U", "/app/trajectories")).toBe("node");
  }, 600_000);
});
