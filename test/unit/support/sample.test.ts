import { afterEach, describe, expect, it, vi } from "vitest";
import { sampleOf } from "../../support/sample.js";

const CASES = ["a", "b", "c", "d", "e"];
const sample = (ownCode: string[] = []) =>
  sampleOf("letters", CASES, { perSlot: 2, name: (c) => c, ownCode });

describe("a slow matrix sampled per run", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("deals the cases into slots that together run each case once, and names the ones left out", () => {
    const ran: string[] = [];
    for (const slot of [0, 1, 2]) {
      vi.stubEnv("TEST_SAMPLE", String(slot));
      const { run, skipped, note } = sample();
      expect(run.length).toBeLessThanOrEqual(2);
      expect(skipped).toHaveLength(CASES.length - run.length);
      for (const title of skipped)
        expect(title).toMatch(/^[a-e]: not in this run's sample \(slot \d of 3 .*TEST_SAMPLE=all runs it\)$/);
      expect(note).toContain(`slot ${slot} of 3`);
      expect(note).toContain(`Ran: ${run.join(", ")}`);
      ran.push(...run);
    }
    expect(ran.sort()).toEqual(CASES);
  });

  it("by default takes the slot of the hour, and says how to run it again", () => {
    vi.useFakeTimers();
    try {
      for (const [hour, slot] of [
        [499_038, 0],
        [499_039, 1],
        [499_040, 2],
        [499_041, 0],
      ] as const) {
        vi.setSystemTime(hour * 3_600_000 + 1_800_000);
        const { run, note } = sample();
        expect(run).toEqual(CASES.filter((_, i) => i % 3 === slot));
        expect(note).toContain(
          `slot ${slot} of 3: UTC hour ${hour} mod 3; TEST_SAMPLE=${slot} runs it again`,
        );
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("runs every case with TEST_SAMPLE=all, or when a file of the matrix's own code changed", () => {
    vi.stubEnv("TEST_SAMPLE", "all");
    expect(sample()).toMatchObject({ run: CASES, skipped: [] });
    vi.unstubAllEnvs();
    // Every path starts with "": a change in the last commit (there always is one) is the matrix's own.
    const whole = sample([""]);
    expect(whole.run).toEqual(CASES);
    expect(whole.note).toContain("its own code changed");
  });

  it("refuses a TEST_SAMPLE that is neither all nor a slot, saying what to set", () => {
    vi.stubEnv("TEST_SAMPLE", "most");
    expect(() => sample()).toThrow(
      'TEST_SAMPLE=most is neither "all" nor a slot number: set TEST_SAMPLE=all',
    );
  });
});
