/** plugin-throttling's retry limiter without Bottleneck: Bottleneck's "failed" contract in a loop. */
import { describe, expect, it } from "vitest";
import { RequestRetries } from "../../../../../src/shared/github/request-retries.js";

describe("RequestRetries (plugin-throttling's retry limiter)", () => {
  it("runs the job again after the wait a failed listener answers, and stops when none answers", async () => {
    const retries = new RequestRetries();
    const seen: number[] = [];
    retries.on("failed", (_error, info) => {
      seen.push(info.retryCount);
      return info.retryCount < 2 ? 0 : undefined;
    });
    let calls = 0;
    const job = async (n: number) => {
      calls++;
      throw new Error(`attempt ${calls} of ${n}`);
    };
    await expect(retries.schedule(job, 7)).rejects.toThrow("attempt 3 of 7");
    expect(seen).toEqual([0, 1, 2]);
  });

  it("returns what the job returns, passing its arguments", async () => {
    const retries = new RequestRetries();
    expect(await retries.schedule(async (a: number, b: string) => `${a}${b}`, 1, "x")).toBe("1x");
  });

  it("refuses a listener for an event it never emits, rather than never calling it", () => {
    expect(() => new RequestRetries().on("retry", () => {})).toThrow(/only "failed"/);
  });
});
