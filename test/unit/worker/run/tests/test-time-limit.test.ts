import { describe, expect, it } from "vitest";
import { BASELINE_FACTOR, gateTimeLimit } from "../../../../../worker/run/tests/test-time-limit.js";

const configuredMs = 300_000;
const ceilingMs = 1_800_000;

describe("gateTimeLimit", () => {
  it("a fast baseline leaves the configured limit as the floor", () => {
    // The Go suite of the report: 54 s cold; three times that is under the configured 300 s.
    expect(gateTimeLimit({ configuredMs, ceilingMs, baselineMs: 54_000 })).toEqual({
      timeoutMs: 300_000,
      configuredMs,
      ceilingMs,
      baseline: { kind: "measured", ms: 54_000 },
    });
  });

  it("a slow baseline raises the limit to three times its time", () => {
    expect(BASELINE_FACTOR).toBe(3);
    expect(gateTimeLimit({ configuredMs, ceilingMs, baselineMs: 250_000 }).timeoutMs).toBe(750_000);
    expect(gateTimeLimit({ configuredMs, ceilingMs, baselineMs: 100_000.4 }).timeoutMs).toBe(300_002);
  });

  it("never above the operator's ceiling", () => {
    expect(gateTimeLimit({ configuredMs, ceilingMs, baselineMs: 900_000 }).timeoutMs).toBe(ceilingMs);
    // A configured limit at the ceiling stays the limit.
    expect(gateTimeLimit({ configuredMs: ceilingMs, ceilingMs, baselineMs: 1_000_000 }).timeoutMs).toBe(
      ceilingMs,
    );
  });

  it("while the baseline runs, three times the configured limit, within the ceiling", () => {
    expect(gateTimeLimit({ configuredMs, ceilingMs, baselineMs: null })).toEqual({
      timeoutMs: 900_000,
      configuredMs,
      ceilingMs,
      baseline: { kind: "running" },
    });
    expect(gateTimeLimit({ configuredMs: 1_000_000, ceilingMs, baselineMs: null }).timeoutMs).toBe(ceilingMs);
  });

  it("a ceiling below the configured limit does not cut under it", () => {
    // toPipelineConfig refuses such a config; the limit still never goes below what the repository set.
    expect(gateTimeLimit({ configuredMs, ceilingMs: 60_000, baselineMs: 10_000 }).timeoutMs).toBe(
      configuredMs,
    );
  });
});
