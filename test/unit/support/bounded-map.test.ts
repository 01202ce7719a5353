import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../support/bounded-map.js";

describe("BoundedMap", () => {
  it("keeps at most its size, dropping the oldest key; setting a kept key drops none", () => {
    const kept = new BoundedMap<string, number>(2);
    kept.set("a", 1).set("b", 2);
    kept.set("a", 3);
    expect([...kept]).toEqual([
      ["a", 3],
      ["b", 2],
    ]);
    kept.set("c", 4);
    expect([...kept]).toEqual([
      ["b", 2],
      ["c", 4],
    ]);
  });
});
