import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { StandbyPool } from "../../../../sandbox/docker/standby-pool.js";

/** A standby as the pool sees one: something to dispose, named for the assertions. */
class Standby {
  disposed = false;
  constructor(readonly name: string) {}
  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

function pool(max: number, idleMs = 60_000, perKind = 1) {
  const started: Standby[] = [];
  const standbys = new StandbyPool<Standby>({ max, idleMs, perKind });
  const refill = (fingerprint: string) =>
    standbys.refill(fingerprint, async () => {
      const standby = new Standby(`${fingerprint}#${started.length}`);
      started.push(standby);
      return standby;
    });
  return { standbys, started, refill };
}

describe("StandbyPool", () => {
  it("hands a standby out once, to its own fingerprint only", async () => {
    const { standbys, refill } = pool(2);
    refill("a");
    expect(await standbys.take("b")).toBeNull();
    const taken = await standbys.take("a");
    expect(taken?.name).toBe("a#0");
    expect(await standbys.take("a")).toBeNull();
  });

  it("starts one standby per fingerprint however often it is refilled", async () => {
    const { standbys, started, refill } = pool(2);
    refill("a");
    refill("a");
    refill("a");
    expect(started).toHaveLength(1);
    expect(standbys.size).toBe(1);
  });

  it("removes the least recently used above its size", async () => {
    const { standbys, started, refill } = pool(2);
    refill("a");
    await sleep(5);
    refill("b");
    await sleep(5);
    refill("a"); // used again: b is now the older
    await sleep(5);
    refill("c");
    await sleep(5);
    expect(standbys.size).toBe(2);
    expect(started.map((s) => [s.name, s.disposed])).toEqual([
      ["a#0", false],
      ["b#1", true],
      ["c#2", false],
    ]);
    expect(await standbys.take("b")).toBeNull();
  });

  it("removes a standby left unused for its idle time", async () => {
    const { standbys, started, refill } = pool(2, 30);
    refill("a");
    await sleep(120);
    expect(started[0]?.disposed).toBe(true);
    expect(await standbys.take("a")).toBeNull();
  });

  it("forgets a standby that failed to start, and the next refill starts one", async () => {
    const standbys = new StandbyPool<Standby>({ max: 2, idleMs: 60_000 });
    standbys.refill("a", async () => {
      throw new Error("engine gone");
    });
    expect(await standbys.take("a")).toBeNull();
    standbys.refill("a", async () => new Standby("a#1"));
    expect((await standbys.take("a"))?.name).toBe("a#1");
  });

  it("keeps up to perKind of one kind, handing out the oldest first, and starts again what was taken", async () => {
    const { standbys, started, refill } = pool(3, 60_000, 3);
    refill("a");
    expect(started.map((s) => s.name)).toEqual(["a#0", "a#1", "a#2"]);
    expect((await standbys.take("a"))?.name).toBe("a#0");
    expect((await standbys.take("a"))?.name).toBe("a#1");
    expect(standbys.size).toBe(1);
    refill("a"); // two taken: two started again, none more
    expect(started.map((s) => s.name)).toEqual(["a#0", "a#1", "a#2", "a#3", "a#4"]);
    expect(standbys.size).toBe(3);
  });

  it("never keeps more than max of one kind, whatever perKind says", async () => {
    const { standbys, started, refill } = pool(2, 60_000, 3);
    refill("a");
    expect(started).toHaveLength(2);
    expect(standbys.size).toBe(2);
  });

  it("makes room for a new kind from the least recently used one holding more, its newest standby first", async () => {
    const { standbys, started, refill } = pool(3, 60_000, 3);
    refill("a");
    await sleep(5);
    refill("b");
    await sleep(5);
    // b's first from a's three, its second from a's two; a's last one stays: the kinds share the pool.
    expect(started.map((s) => [s.name, s.disposed])).toEqual([
      ["a#0", false],
      ["a#1", true],
      ["a#2", true],
      ["b#3", false],
      ["b#4", false],
    ]);
    expect(standbys.size).toBe(3);
    refill("a"); // used again: one back from b, which holds more
    await sleep(5);
    expect(started.at(-1)?.name).toBe("a#5");
    expect(started.filter((s) => s.name.startsWith("b") && !s.disposed)).toHaveLength(1);
    expect((await standbys.take("a"))?.name).toBe("a#0");
    expect((await standbys.take("a"))?.name).toBe("a#5");
    expect(await standbys.take("a")).toBeNull();
  });

  it("removes each standby of a kind after its own idle time", async () => {
    const { standbys, started, refill } = pool(2, 30, 2);
    refill("a");
    await sleep(120);
    expect(started.map((s) => s.disposed)).toEqual([true, true]);
    expect(standbys.size).toBe(0);
  });

  it("removes every standby of every kind on close, several of one kind too", async () => {
    const { standbys, started, refill } = pool(6, 60_000, 3);
    refill("a");
    refill("b");
    expect(started).toHaveLength(6);
    await standbys.close();
    expect(started.map((s) => s.disposed)).toEqual([true, true, true, true, true, true]);
    expect(standbys.size).toBe(0);
  });

  it("keeps none when its size is 0, and none after close", async () => {
    const none = pool(0);
    none.refill("a");
    expect(none.started).toHaveLength(0);
    const { standbys, started, refill } = pool(2);
    refill("a");
    await standbys.close();
    expect(started[0]?.disposed).toBe(true);
    refill("b");
    expect(started).toHaveLength(1);
    expect(standbys.enabled).toBe(false);
  });
});
