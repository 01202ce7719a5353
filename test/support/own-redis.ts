/**
 * A redis-server of the test's own, on a free port with its data in a temp dir, so a test can stop
 * and restart it (the shared Redis on 6379 is never touched). Started in the foreground as a child
 * of the test process; `stop()` shuts it down the way an operator would (SHUTDOWN), `kill()` ends it.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { freePort } from "./ports.js";

export class OwnRedis {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly args: string[],
  ) {}

  /** `args` as for redis-server, e.g. ["deploy/redis.conf"] or ["--appendonly", "no"]. */
  static async start(args: string[]): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort(), await mkdtemp(join(tmpdir(), "af-own-redis-")), args);
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      "redis-server",
      [
        ...this.args,
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--dir",
        this.dir,
        "--daemonize",
        "no",
      ],
      { stdio: "ignore" },
    );
    this.child = child;
    for (let i = 0; i < 100; i++) {
      if (child.exitCode !== null)
        throw new Error(`redis-server ${this.args.join(" ")} exited ${child.exitCode}`);
      if (await this.answers()) return;
      await sleep(100);
    }
    throw new Error(`redis-server on port ${this.port} did not answer`);
  }

  /** SHUTDOWN, as an operator's restart does; resolves once the process has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, "exit");
    // Refused when CONFIG-like commands are renamed? SHUTDOWN is not; the process signal is the fallback.
    const client = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on("error", () => {});
    await client
      .connect()
      .then(() => client.shutdown())
      .catch(() => child.kill("SIGTERM"));
    client.disconnect();
    await exited;
  }

  /** SIGKILL: the process ends at once, no save, no goodbye to clients (a crash, an OOM kill). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async remove(): Promise<void> {
    await this.stop().catch(() => this.child?.kill("SIGKILL"));
    await rm(this.dir, { recursive: true, force: true });
  }

  private async answers(): Promise<boolean> {
    const client = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      return (await client.ping()) === "PONG";
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }
}
