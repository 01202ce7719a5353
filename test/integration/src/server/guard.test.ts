/**
 * The webhook server as a process (`npm run start:server`), as the internet reaches it: it does not
 * start without WEBHOOK_SECRET, refuses webhooks signed with Probot's public development secret, and
 * answers bodies over the size limit with 413 before anything buffers or logs them.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis } from "../../../../src/shared/queue/index.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { freePort } from "../../../support/ports.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../support/redis.js";
import { waitFor } from "../../../support/stack-parts.js";
import { deliver, labelEvent } from "../../../support/webhooks.js";

const ROOT = join(import.meta.dirname, "..", "..", "..", "..");
const MB = 1024 * 1024;
const up = await redisAvailable();

/** `npm run start:server` as one node process (so its pid is the server's), output kept. */
function startServer(env: Record<string, string>, entry = "src/server/app-server.ts") {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  return { child, output };
}

/** The server process's resident memory now and at its peak (VmHWM), in MB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: Math.round(kb("VmRSS") / 1024), peak: Math.round(kb("VmHWM") / 1024) };
}

/**
 * POSTs `total` bytes of `chunk` (in 1 MB writes) with a bogus signature; resolves with the status
 * the server answered, or "closed" when it closed the connection without one.
 */
function postLarge(url: string, total: number, chunk: Buffer, headers: Record<string, string> = {}) {
  return new Promise<{ status: number | "closed"; sent: number }>((resolve) => {
    let sent = 0;
    const req = request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": "oversized-1",
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
        ...headers,
      },
    });
    req.on("response", (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, sent });
    });
    req.on("error", () => resolve({ status: "closed", sent }));
    const write = () => {
      while (sent < total && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}

describe.skipIf(!up)("npm run start:server facing the internet", () => {
  let github: GitHubServer;
  const children: ChildProcess[] = [];
  const prefix = testPrefix();
  const base = () => ({
    APP_ID: String(github.appId),
    PRIVATE_KEY: github.keys.privateKeyPem,
    GHE_HOST: github.host,
    GHE_PROTOCOL: "http",
    HOST: "127.0.0.1",
    AGENT_FIX_REDIS_URL: TEST_REDIS_URL,
    AGENT_FIX_QUEUE_PREFIX: prefix,
    AGENT_FIX_GITHUB_THROTTLE: "false",
  });

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({
      owner: "octo",
      name: "demo",
      files: { "README.md": "x\n" },
      permissions: { alice: "write" },
    });
  });
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    const redis = await connectRedis(TEST_REDIS_URL, "producer");
    await dropPrefix(redis, prefix);
    redis.disconnect();
    await github?.stop();
  });

  it.each<{ command: string; entry: string; what: string; secret: Record<string, string> }>([
    { command: "npm run start:server", entry: "src/server/app-server.ts", what: "unset", secret: {} },
    {
      command: "npm run start:server",
      entry: "src/server/app-server.ts",
      what: "set to Probot's public development secret",
      secret: { WEBHOOK_SECRET: "development" },
    },
    { command: "npm start", entry: "src/main.ts", what: "unset", secret: {} },
  ])(
    "$command does not start with WEBHOOK_SECRET $what, and says so naming the variable",
    async ({ entry, secret }) => {
      const port = await freePort();
      const env = { ...base(), ...secret, PORT: String(port), LOG_LEVEL: "info" };
      const { child, output } = startServer(env, entry);
      children.push(child);
      const started = (async () => {
        for (;;) {
          const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.ok,
            () => false,
          );
          if (ok) return "listening" as const;
          await sleep(500);
        }
      })();
      const exited = once(child, "exit").then(([code]) => code as number | null);
      const outcome = await Promise.race([exited, started]);
      expect(outcome, "the server started without a webhook secret").not.toBe("listening");
      expect(outcome).not.toBe(0);
      expect(output.join("")).toContain("WEBHOOK_SECRET");
      expect(output.join("")).toMatch(/openssl rand -hex 32/);
    },
    60_000,
  );

  describe("with a real secret", () => {
    const secret = "a-real-webhook-secret-0f3a9c";
    let url = "";
    let server: ReturnType<typeof startServer>;

    beforeAll(async () => {
      const port = await freePort();
      server = startServer({
        ...base(),
        WEBHOOK_SECRET: secret,
        PORT: String(port),
        LOG_LEVEL: "debug",
      });
      children.push(server.child);
      url = `http://127.0.0.1:${port}`;
      await waitFor(
        "the server to listen",
        () =>
          fetch(`${url}/healthz`).then(
            (r) => r.ok,
            () => false,
          ),
        45_000,
        500,
      );
    }, 60_000);

    const statusComments = (issue: number) =>
      github.state
        .commentsOn("octo", "demo", issue)
        .filter((c) => c.body.includes("<!-- agent-fix:status -->"));

    it("refuses a webhook signed with Probot's development secret (401) and starts nothing", async () => {
      const issue = github.addIssue("octo", "demo", { title: "Forged", body: "x" }).number;
      const forged = labelEvent(github, { owner: "octo", repo: "demo", issue }, "labeled", "agent-fix", {
        login: "alice",
      });
      expect(await deliver(`${url}/api/github/webhooks`, "development", forged)).toBe(401);
      expect(statusComments(issue)).toEqual([]);
      expect(await deliver(`${url}/api/github/webhooks`, secret, forged)).toBe(200);
      expect(statusComments(issue)).toHaveLength(1);
    });

    it("answers bodies over 25 MB with 413 before reading them; memory stays bounded; the body is never logged", async () => {
      const hook = `${url}/api/github/webhooks`;
      const marker = "HOSTILE-PAYLOAD-MARKER-";
      const chunk = Buffer.alloc(MB, marker);
      const before = memoryOf(server.child.pid ?? 0);

      // Content-Length says 300 MB: refused from the header.
      const declared = await postLarge(hook, 300 * MB, chunk, { "content-length": String(300 * MB) });
      // No Content-Length (chunked): refused once 25 MB have streamed in.
      const streamed = await postLarge(hook, 300 * MB, chunk);
      // A Content-Length that lies (1 KB, then 300 MB follow): the server reads 1 KB, no more.
      const lying = await postLarge(hook, 300 * MB, chunk, { "content-length": "1024" });
      const after = memoryOf(server.child.pid ?? 0);
      console.log(
        `server memory: rss ${before.rss} MB -> ${after.rss} MB, peak ${before.peak} MB -> ${after.peak} MB; ` +
          `client sent ${declared.sent / MB} MB (declared), ${streamed.sent / MB} MB (streamed), ${lying.sent / MB} MB (lying) of 300 MB each`,
      );
      expect(declared.status).toBe(413);
      expect(streamed.status).toBe(413);
      expect(lying.status === "closed" || (lying.status >= 400 && lying.status < 500)).toBe(true);
      // Never the whole body: the server took in at most the limit (plus socket buffers).
      expect(streamed.sent).toBeLessThan(300 * MB);
      expect(after.peak - before.peak).toBeLessThan(150);

      // A normal delivery still works, and nothing of the refused bodies reached the log.
      const issue = github.addIssue("octo", "demo", { title: "After", body: "x" }).number;
      const label = labelEvent(github, { owner: "octo", repo: "demo", issue }, "labeled", "agent-fix", {
        login: "alice",
      });
      expect(await deliver(hook, secret, label)).toBe(200);
      expect(statusComments(issue)).toHaveLength(1);
      const log = server.output.join("");
      expect(log).toContain("webhook refused");
      expect(log).not.toContain(marker);
    }, 120_000);
  });
});
