import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { luaScript } from "../../../../../src/shared/queue/lua-script.js";
import { redisUrl, requireRedis } from "../../../../support/services.js";
import { waitFor } from "../../../../support/stack-parts.js";

// Real Redis, watched through MONITOR: what crosses the wire is the point.
const redisUp = await requireRedis();

describe.runIf(redisUp)("Lua scripts by their SHA", () => {
  const clients: Redis[] = [];
  const client = () => {
    const redis = new Redis(redisUrl());
    clients.push(redis);
    return redis;
  };
  afterAll(() => Promise.all(clients.map((redis) => redis.quit())));

  it("sends the script's text once per connection, then only its SHA; the answers are the script's", async () => {
    const key = `af-test-lua-${randomUUID()}`;
    const script = luaScript("TestConcat", 1, "return KEYS[1] .. ':' .. ARGV[1] .. ':' .. ARGV[2]");
    const seen: string[][] = [];
    const monitor = await client().monitor();
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args.includes(key)) seen.push(args);
    });
    const redis = client();
    expect(await script(redis, [key], ["a", 1])).toBe(`${key}:a:1`);
    expect(await script(redis, [key], ["b", 2])).toBe(`${key}:b:2`);
    // Another connection has not seen the script: its text goes once more there.
    expect(await script(client(), [key], ["c", 3])).toBe(`${key}:c:3`);
    await waitFor("the three calls in MONITOR", () => seen.length === 3, 10_000, 10);
    monitor.disconnect();
    expect(seen.map((args) => args[0]?.toLowerCase())).toEqual(["eval", "evalsha", "eval"]);
    expect(seen[1]?.[1]).toMatch(/^[0-9a-f]{40}$/);
  });

  it("refuses a call with the wrong number of keys, naming the script", async () => {
    const script = luaScript("TestTwoKeys", 2, "return 1");
    expect(() => script(client(), ["only-one"], [])).toThrow("the TestTwoKeys script takes 2 key(s), not 1");
  });
});
