import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { throttled } from "../../../../../worker/run/solve/throttled.js";

function recorder() {
  const sent: number[] = [];
  return { sent, update: async (value: number) => void sent.push(value) };
}

describe("throttled status updates", () => {
  it("sends the latest of a burst, then the latest of the next one after the interval", async () => {
    const { sent, update } = recorder();
    const status = throttled(update, 50);
    status.push(1);
    status.push(2);
    status.push(3);
    await vi.waitFor(() => expect(sent).toEqual([3]));
    status.push(4);
    status.push(5);
    await vi.waitFor(() => expect(sent).toEqual([3, 5]));
    status.stop();
  });

  it("drops the waiting update on stop, and ignores pushes after it", async () => {
    const { sent, update } = recorder();
    const status = throttled(update, 50);
    status.push(1);
    await vi.waitFor(() => expect(sent).toEqual([1]));
    status.push(2);
    status.stop();
    status.push(3);
    await sleep(200);
    expect(sent).toEqual([1]);
  });

  it("a failing update neither throws into the caller nor stops later ones", async () => {
    const sent: number[] = [];
    const status = throttled(async (value: number) => {
      sent.push(value);
      throw new Error("GitHub is down");
    }, 10);
    status.push(1);
    await vi.waitFor(() => expect(sent).toEqual([1]));
    status.push(2);
    await vi.waitFor(() => expect(sent).toEqual([1, 2]));
    status.stop();
  });
});
