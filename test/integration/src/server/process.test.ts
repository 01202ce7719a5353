/**
 * The server as a process: `npm start` without credentials goes through Probot's manifest flow (the
 * registration page offers app.yml's manifest as valid JSON); with credentials `npm run start:server`
 * reports Redis on /healthz and exits cleanly on SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { freePort } from "../../../support/ports.js";
import { redisUrl, requireRedis } from "../../../support/services.js";

/** The command line of an npm script in package.json, split into words (no shell syntax in ours). */
function scriptOf(name: string): string[] {
  const scripts = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> })
    .scripts;
  return (scripts[name] ?? "").split(/\s+/);
}

describe("npm start without credentials", () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    // tsx runs node as a child: end the whole process group we started.
    if (child?.pid) process.kill(-child.pid, "SIGTERM");
  });

  it("serves the manifest flow with app.yml's private, least-permission manifest", async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      NO_SMEE_SETUP: "true",
      LOG_LEVEL: "warn",
    };
    child = spawn("node_modules/.bin/tsx", ["src/main.ts"], { env, detached: true, stdio: "ignore" });
    let html = "";
    await expect
      .poll(
        async () => {
          html = await fetch(`http://127.0.0.1:${port}/probot`).then(
            (r) => r.text(),
            () => "",
          );
          return html.includes('name="manifest"');
        },
        { timeout: 45_000, interval: 500 },
      )
      .toBe(true);
    const value = /name="manifest" id="manifest" value='([^']*)'/.exec(html)?.[1];
    const manifest = JSON.parse(value ?? "null") as Record<string, unknown>;
    expect(manifest.public).toBe(false);
    expect(manifest.default_permissions).toEqual({
      contents: "write",
      issues: "write",
      pull_requests: "write",
      checks: "write",
      actions: "read",
      statuses: "read",
      metadata: "read",
    });
    expect(manifest.default_events).toEqual([
      "issues",
      "issue_comment",
      "pull_request",
      "pull_request_review",
      "pull_request_review_comment",
      "check_suite",
      "check_run",
      "status",
      "workflow_run",
      "push",
    ]);
  });
});

const up = await requireRedis();

describe.skipIf(!up)("npm run start:server", () => {
  let github: GitHubServer | undefined;
  afterAll(() => github?.stop());

  it("serves /healthz and exits 0 on SIGTERM", async () => {
    github = await startGitHubServer();
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ID: String(github.appId),
      PRIVATE_KEY: github.keys.privateKeyPem,
      WEBHOOK_SECRET: "s",
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      HOST: "127.0.0.1",
      PORT: String(port),
      AGENT_FIX_REDIS_URL: redisUrl(),
      AGENT_FIX_QUEUE_PREFIX: `test-af-proc-${port}`,
      LOG_LEVEL: "fatal",
    };
    // Exactly what `npm run start:server` runs (without npm), signalled as a whole process group.
    const [command = "", ...args] = scriptOf("start:server");
    const server = spawn(command === "node" ? process.execPath : command, args, {
      env,
      detached: true,
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
    await expect
      .poll(
        () =>
          fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.status,
            () => 0,
          ),
        { timeout: 45_000, interval: 500 },
      )
      .toBe(200);
    process.kill(-(server.pid ?? 0), "SIGTERM");
    expect(await exited).toBe(0);
  });

  it("exits 0 when SIGTERM comes again while it is still shutting down (tsx relays it to a slow child)", async () => {
    github ??= await startGitHubServer();
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ID: String(github.appId),
      PRIVATE_KEY: github.keys.privateKeyPem,
      WEBHOOK_SECRET: "s",
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      HOST: "127.0.0.1",
      PORT: String(port),
      AGENT_FIX_REDIS_URL: redisUrl(),
      AGENT_FIX_QUEUE_PREFIX: `test-af-proc2-${port}`,
      LOG_LEVEL: "info",
    };
    // Node itself, no tsx in between: this test sends the repeated signal the way tsx would.
    const server = spawn(process.execPath, ["--import", "tsx", "src/server/app-server.ts"], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    server.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<[number | null, string | null]>((resolve) =>
      server.on("exit", (code, signal) => resolve([code, signal])),
    );
    await expect
      .poll(
        () =>
          fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.status,
            () => 0,
          ),
        {
          timeout: 45_000,
          interval: 500,
        },
      )
      .toBe(200);
    // A webhook still arriving (its body half sent) keeps the server closing until it ends.
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      "POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
    );
    server.kill("SIGTERM");
    await expect.poll(() => output.includes("SIGTERM received"), { timeout: 20_000 }).toBe(true);
    server.kill("SIGTERM");
    await Promise.race([
      exited,
      expect.poll(() => output.includes("already shutting down"), { timeout: 20_000 }).toBe(true),
    ]);
    socket.destroy();
    expect(await exited).toEqual([0, null]);
  });
});
