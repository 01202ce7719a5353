/**
 * docker-compose.yml checked against what it runs, since Debian's packages here carry no `docker
 * compose` plugin: the roles main.ts knows, each service's environment accepted by the schemas the
 * processes parse at start, the ports and paths the Dockerfile sets, Redis on deploy/redis.conf.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseEnv } from "../../../src/shared/config/env.js";
import { parseWorkerEnv } from "../../../worker/config/worker-env.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  group_add?: string[];
  stop_grace_period?: string;
  depends_on?: Record<string, { condition: string }>;
}
const compose = parse(read("docker-compose.yml"), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const dockerfile = read("Dockerfile");
/** What .env holds in the guide: the app's credentials (values that pass the schemas). */
const dotEnv = { APP_ID: "1", PRIVATE_KEY: "-----BEGIN KEY-----", WEBHOOK_SECRET: "s" };

describe("docker-compose.yml", () => {
  const { server, worker, redis } = compose.services;

  it("runs the server, a worker and Redis, the app's two roles from one image", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["redis", "server", "worker"]);
    expect(server?.environment?.AGENT_FIX_ROLE).toBe("server");
    expect(worker?.environment?.AGENT_FIX_ROLE).toBe("worker");
    expect(server?.image).toBe(worker?.image);
    expect(read("src/main.ts")).toMatch(/role === "worker"[\s\S]*role === "server"/);
    for (const app of [server, worker]) expect(app?.depends_on?.redis?.condition).toBe("service_healthy");
  });

  it("gives each process an environment its schema accepts, Redis at the compose service", () => {
    const serverEnv = parseEnv({ ...dotEnv, ...server?.environment });
    expect(serverEnv.AGENT_FIX_REDIS_URL).toBe("redis://redis:6379");
    const workerEnv = parseWorkerEnv({ ...dotEnv, ...worker?.environment });
    expect(workerEnv.AGENT_FIX_REDIS_URL).toBe("redis://redis:6379");
    expect(workerEnv.AGENT_FIX_WORKER_PORT).toBe(3001);
    // Every variable named is one the processes read (a misspelt one would be ignored silently).
    const known = { ...serverEnv, ...workerEnv, AGENT_FIX_ROLE: "" };
    for (const name of [...Object.keys(server?.environment ?? {}), ...Object.keys(worker?.environment ?? {})])
      expect(known).toHaveProperty(name);
  });

  it("publishes the server's port and asks the worker's /healthz where the image's HEALTHCHECK looks", () => {
    expect(dockerfile).toMatch(/PORT=3000/);
    expect(server?.ports).toHaveLength(1);
    expect(server?.ports?.[0]).toMatch(/:3000$/);
    expect(dockerfile).toMatch(/AGENT_FIX_WORKER_PORT=3001/);
    expect(dockerfile).toMatch(/HEALTHCHECK .*deploy\/healthcheck\.mjs/);
  });

  it("gives the worker the Docker socket and its group, and time to hand runs back", () => {
    expect(worker?.volumes).toContain("/var/run/docker.sock:/var/run/docker.sock");
    expect(worker?.group_add?.[0]).toMatch(/^\$\{DOCKER_GID:\?/);
    const grace = parseEnv(dotEnv).AGENT_FIX_SHUTDOWN_GRACE_SECONDS;
    expect(Number.parseInt(worker?.stop_grace_period ?? "0", 10)).toBeGreaterThan(grace);
  });

  it("shares the trajectory directory the Dockerfile gives to `node` between server and worker", () => {
    expect(dockerfile).toMatch(/mkdir -p \/app\/trajectories && chown node:node \/app\/trajectories/);
    expect(parseEnv(dotEnv).AGENT_FIX_TRAJECTORY_DIR).toBe("trajectories"); // relative to WORKDIR /app
    expect(dockerfile).toMatch(/WORKDIR \/app/);
    for (const app of [server, worker]) expect(app?.volumes).toContain("trajectories:/app/trajectories");
    expect(compose.volumes).toHaveProperty("trajectories");
  });

  it("runs Redis on deploy/redis.conf: append-only, noeviction", () => {
    expect(redis?.volumes).toContain("./deploy/redis.conf:/etc/agent-fix/redis.conf:ro");
    expect(redis?.command?.slice(0, 2)).toEqual(["redis-server", "/etc/agent-fix/redis.conf"]);
    const conf = read("deploy/redis.conf");
    expect(conf).toMatch(/^appendonly yes$/m);
    expect(conf).toMatch(/^maxmemory-policy noeviction$/m);
  });
});
