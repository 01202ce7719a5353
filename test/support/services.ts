/**
 * Real services for integration tests. In CI (CI=true) a test that needs Redis or Docker and cannot reach
 * it FAILS; outside CI it is skipped with a loud message that says what to start.
 *
 *   const docker = await requireDocker();
 *   describe.runIf(docker)("...", () => { ... });
 */
import Docker from "dockerode";
import { Redis } from "ioredis";
import { SANDBOX_IMAGE } from "../../sandbox/version.js";

const inCI = process.env.CI === "true" || process.env.CI === "1";

function unavailable(what: string, howToStart: string, detail: string): false {
  const message = `${what} is not reachable (${detail}). ${howToStart}`;
  if (inCI) throw new Error(`CI=true and ${message}`);
  const bar = "!".repeat(100);
  console.warn(
    `\n${bar}\n!! SKIPPING tests that need ${what}: ${message}\n!! (bash .ci/run starts everything)\n${bar}\n`,
  );
  return false;
}

let dockerProbe: Promise<string | null> | undefined;
async function probeDocker(): Promise<string | null> {
  try {
    const docker = new Docker();
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) => setTimeout(() => reject(new Error("timed out after 5 s")), 5000).unref()),
    ]);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** True when the Docker engine answers; false (with a loud message) outside CI; throws in CI. */
async function requireDocker(): Promise<boolean> {
  dockerProbe ??= probeDocker();
  const problem = await dockerProbe;
  if (problem === null) return true;
  return unavailable("the Docker engine", "Start it: dockerd & (apt-get install docker.io).", problem);
}

/** requireDocker() and the sandbox image present (built by `npm run sandbox:image`). */
export async function requireSandboxImage(image: string = SANDBOX_IMAGE): Promise<boolean> {
  if (!(await requireDocker())) return false;
  try {
    await new Docker().getImage(image).inspect();
    return true;
  } catch {
    return unavailable(`the sandbox image ${image}`, "Build it: npm run sandbox:image.", "no such image");
  }
}

export function redisUrl(): string {
  return process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
}

let redisProbe: Promise<string | null> | undefined;
async function probeRedis(): Promise<string | null> {
  const client = new Redis(redisUrl(), {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.disconnect();
  }
}

/** True when Redis (REDIS_URL, default redis://127.0.0.1:6379) answers PING; see requireDocker(). */
export async function requireRedis(): Promise<boolean> {
  redisProbe ??= probeRedis();
  const problem = await redisProbe;
  if (problem === null) return true;
  return unavailable(
    `Redis at ${redisUrl()}`,
    "Start it: redis-server deploy/redis.conf --daemonize yes (apt-get install redis-server).",
    problem,
  );
}

/** Debian's headless Chromium for the browser tests (`apt-get install chromium`, in .ci/services). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** True when Chromium is installed; false (with a loud message) outside CI; throws in CI. */
export async function requireChromium(): Promise<boolean> {
  const { access, constants } = await import("node:fs/promises");
  return access(CHROMIUM, constants.X_OK).then(
    () => true,
    () => unavailable("Chromium", "Install it: apt-get install -y chromium.", `no executable ${CHROMIUM}`),
  );
}
