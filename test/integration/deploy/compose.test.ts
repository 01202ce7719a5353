/**
 * docker-compose.yml as docs/operating.md runs it, with Debian's docker-compose (1.29): the real file
 * and deploy/ copied to a project directory of the test's own with a .env beside them, the app's image
 * of this source (deploy/build-image.sh, as app-image.test.ts), Redis built from deploy/redis.Dockerfile.
 * `up -d`, then the server's /healthz through the published port and the worker registered with the
 * compose Redis (BullMQ names its connection after the queue), then `down -v`. (The image's
 * HEALTHCHECK for both roles is app-image.test.ts's.) The worker
 * needs GitHub at start: the stand-in runs in a container on the compose network (github-in-compose.ts).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../support/ports.js";
import { requireSandboxImage } from "../../support/services.js";
import { poll } from "../../support/stack-parts.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const composeInstalled = await run("docker-compose", ["version"]).then(
  () => true,
  () => false,
);
const ready = (await requireSandboxImage()) && composeInstalled;
if (process.env.CI && !composeInstalled) throw new Error("docker-compose is missing: run .ci/services");

describe.runIf(ready)("docker-compose.yml with Debian's docker-compose", () => {
  const project = `af-compose-${randomBytes(4).toString("hex")}`;
  const github = `${project}-github`;
  let dir = "";
  let port = 0;
  const compose = async (...args: string[]) =>
    (await run("docker-compose", ["-p", project, ...args], { cwd: dir, maxBuffer: 16 << 20 })).stdout.trim();
  const docker = async (...args: string[]) =>
    (await run("docker", args, { maxBuffer: 16 << 20 })).stdout.trim();

  beforeAll(async () => {
    const built = await run("bash", [join(ROOT, "deploy/build-image.sh")], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    const image = built.stdout.trim().split("\n").at(-1) ?? "";
    dir = await mkdtemp(join(tmpdir(), "af-compose-"));
    await cp(join(ROOT, "docker-compose.yml"), join(dir, "docker-compose.yml"));
    await cp(join(ROOT, "deploy"), join(dir, "deploy"), { recursive: true });
    port = await freePort();
    const settings = {
      AGENT_FIX_IMAGE: image,
      AGENT_FIX_PORT: String(port),
      DOCKER_GID: String(statSync("/var/run/docker.sock").gid),
      WEBHOOK_SECRET: "compose-test-secret",
      GHE_HOST: "github:8080",
      GHE_PROTOCOL: "http",
      AGENT_FIX_GITHUB_THROTTLE: "false",
    };
    const env = (more: Record<string, string>) =>
      writeFile(
        join(dir, ".env"),
        Object.entries({ ...settings, ...more })
          .map(([k, v]) => `${k}=${v}`)
          .join("\n"),
      );
    await env({});
    // Redis first: its network is where the GitHub stand-in joins, as `github`.
    await compose("up", "-d", "redis");
    await docker(
      ...["run", "-d", "--no-healthcheck", "--name", github],
      ...["--network", `${project}_default`, "--network-alias", "github"],
      ...["-v", `${ROOT}:/repo:ro`, "-w", "/repo", "--entrypoint", "node", image],
      ...["--import", "tsx", "test/integration/deploy/github-in-compose.ts"],
    );
    // Its first line is the app, as JSON; a container that exited first will print none.
    const seen = await poll(
      async () => ({
        line: (await docker("logs", github).catch(() => "")).split("\n")[0] ?? "",
        running: (await docker("inspect", "-f", "{{.State.Running}}", github).catch(() => "")) === "true",
      }),
      ({ line, running }) => line.startsWith("{") || !running,
    );
    if (!seen.line.startsWith("{")) {
      const output = await run("docker", ["logs", github], { maxBuffer: 16 << 20 }).then(
        (out) => `${out.stdout}${out.stderr}`,
        (error: unknown) => String(error),
      );
      throw new Error(
        `The GitHub stand-in's container ${github} ${seen.running ? "printed no app line in 120 s" : "exited"} ` +
          `before printing its app as JSON. Its output:\n${output.slice(-3000)}\nIt runs this checkout ` +
          "(mounted at /repo) with the image's node: node_modules must be this checkout's own directory, " +
          "not a symlink to one outside it (as a git worktree sharing another's).",
      );
    }
    const app = JSON.parse(seen.line) as { appId: number; privateKey: string };
    await env({ APP_ID: String(app.appId), PRIVATE_KEY: app.privateKey.trim().replace(/\n/g, "\\n") });
  }, 30 * 60_000);

  afterAll(async () => {
    if (!dir) return;
    await docker("rm", "-f", github).catch(() => "");
    await compose("down", "-v", "--timeout", "5").catch((e: unknown) => console.log(String(e)));
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "up -d: the server answers /healthz and the worker registers with Redis; down -v",
    async () => {
      const started = Date.now();
      await compose("up", "-d");
      const upSeconds = Math.round((Date.now() - started) / 1000);
      const health = await poll(
        () =>
          // Docker's proxy may hold a connection while the server starts: each try gives up after 5 s.
          fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) }).then(
            async (r) => ({ status: r.status, body: (await r.json()) as unknown }),
            () => ({ status: 0, body: null as unknown }),
          ),
        (h) => h.status === 200,
        180,
      );
      if (health.status !== 200) console.log(await compose("logs", "--tail", "30", "server"));
      expect(health).toEqual({ status: 200, body: { status: "ok", redis: "ok" } });
      // BullMQ names a worker's connection `PREFIX:base64(queue)` (Queue.getWorkers lists it that way).
      const workerName = `name=agent-fix:${Buffer.from("agent-fix").toString("base64")}`;
      const clients = await poll(
        () => compose("exec", "-T", "redis", "redis-cli", "CLIENT", "LIST").catch(() => ""),
        (list) => list.includes(`${workerName} `) || list.includes(`${workerName}:w:`),
        180,
      );
      if (!clients.includes(workerName)) console.log(await compose("logs", "--tail", "30", "worker"));
      expect(clients).toContain(workerName);
      const readySeconds = Math.round((Date.now() - started) / 1000);
      await docker("rm", "-f", github);
      const down = Date.now();
      await compose("down", "-v", "--timeout", "5");
      expect(await compose("ps", "-q")).toBe("");
      console.log(
        `compose: up -d ${upSeconds} s, server healthy and worker registered ${readySeconds} s after up began, down ${Math.round((Date.now() - down) / 1000)} s`,
      );
    },
    10 * 60_000,
  );
});
