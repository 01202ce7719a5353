/**
 * A Redis restart loses nothing that was queued, with Redis run as deploy/redis.conf says (the file
 * .ci/services starts the shared Redis with): before, a queued job vanished on restart and its issue's
 * status stayed "Queued". The worker warns at start when its Redis would lose the queue. Each test runs
 * a redis-server of its own (test/support/own-redis.ts); the shared one is never restarted.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import {
  connectRedis,
  createFixQueue,
  enqueueFix,
  type FixJobData,
} from "../../../../../src/shared/queue/index.js";
import { startFixWorker } from "../../../../../worker/main.js";
import { completed } from "../../../../../worker/run-end.js";
import { capturingLogger, type LogLine } from "../../../../support/logs.js";
import { OwnRedis } from "../../../../support/own-redis.js";

const DEPLOYED = ["deploy/redis.conf"];
const job: FixJobData = {
  installationId: 1,
  owner: "octo",
  repo: "demo",
  repoId: 7,
  issueNumber: 3,
  requestedBy: "alice",
  trigger: "label",
  deliveryId: randomUUID(),
};

describe("the queue's Redis", () => {
  const servers: OwnRedis[] = [];
  const own = async (args: string[]) => {
    const server = await OwnRedis.start(args);
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.remove()));
  });

  it("as deployed, keeps a queued run through a restart, and a worker then runs it to the end", async () => {
    const redis = await own(DEPLOYED);
    const producer = await connectRedis(redis.url, "producer");
    const queue = createFixQueue(producer, { prefix: "af-persist" });
    const queued = await enqueueFix(queue, job);
    expect(queued.status).toBe("queued");
    await queue.close();
    producer.disconnect();

    await redis.restart();

    const ran: FixJobData[] = [];
    const logs: LogLine[] = [];
    const worker = await startFixWorker({
      redisUrl: redis.url,
      prefix: "af-persist",
      process: async (j) => {
        ran.push(j.data);
        return completed("done");
      },
      logger: capturingLogger(logs),
    });
    try {
      await expect.poll(() => ran.length, { timeout: 20_000 }).toBe(1);
      expect(ran[0]).toMatchObject({ issueNumber: 3, deliveryId: job.deliveryId });
      // Append-only: nothing to warn about.
      expect(logs.filter((l) => l.level === "warn")).toEqual([]);
    } finally {
      await worker.shutdown(0);
    }
  });

  it("the worker warns at start when Redis has no persistence, and when it cannot tell (CONFIG refused, AOF off)", async () => {
    const cases: Array<{ args: string[]; warning: RegExp | null }> = [
      { args: ["--appendonly", "no", "--save", ""], warning: /Redis has no persistence.*appendonly yes/ },
      { args: ["--appendonly", "no", "--save", "3600 1"], warning: /snapshots only/ },
      // Managed Redis that refuses CONFIG: INFO persistence still tells whether append-only is on.
      { args: [...DEPLOYED, "--rename-command", "CONFIG", ""], warning: null },
      {
        args: ["--appendonly", "no", "--rename-command", "CONFIG", ""],
        warning: /Could not tell.*append-only is off/,
      },
    ];
    for (const { args, warning } of cases) {
      const redis = await own(args);
      const logs: LogLine[] = [];
      const worker = await startFixWorker({
        redisUrl: redis.url,
        prefix: "af-persist-warn",
        process: async () => completed("done"),
        logger: capturingLogger(logs),
      });
      await worker.shutdown(0);
      const warnings = logs.filter((l) => l.level === "warn").map((l) => l.msg);
      if (warning) expect(warnings, args.join(" ")).toEqual([expect.stringMatching(warning)]);
      else expect(warnings, args.join(" ")).toEqual([]);
    }
  });
});
