/**
 * The time limit of the gate's and the proof's test runs (the run's gate and prove steps), from
 * what the baseline measured on the same machine. `test.timeoutSeconds` is chosen for one run of
 * the tests alone; the gate's run is rarely alone: it shares the machine with the agent's sandbox, the
 * next sandbox started while it tests, and, for an early submission, the baseline itself, and every fresh
 * sandbox builds cold (Go's and Rust's caches live in the workspace). A Go suite that took 54 s in the
 * baseline was killed at the fixed 300 s beside it. So:
 *
 * - once the baseline has its time: max(configured, BASELINE_FACTOR × baseline), within the operator's
 *   ceiling. Three times covers the run sharing two cores with another one (twice as long) with room for
 *   the tests the change adds; a change that makes a test hang still ends within three times what the
 *   whole suite takes. Never below the configured limit: the repository's own choice stays the floor.
 * - while the baseline still runs (the agent submitted before it ended): its time is not known and the two
 *   runs compete for the machine, so BASELINE_FACTOR × the configured limit, within the ceiling.
 *
 * A sandbox's command limit is fixed when it starts (a shorter limit set later would have to cancel the
 * run, and the sandbox with it), so a gate that started while the baseline ran keeps its limit.
 */

/** How many times the baseline's time (or, before it is known, the configured limit) a gate's run gets. */
export const BASELINE_FACTOR = 3;

/** What the tests took on the unchanged code when a run was given its limit. */
export type BaselineTime = { kind: "measured"; ms: number } | { kind: "running" };

export interface TestTimeLimit {
  timeoutMs: number;
  /** `test.timeoutSeconds`, the floor. */
  configuredMs: number;
  /** The operator's `repository.ceilings.testTimeoutSeconds`, the top. */
  ceilingMs: number;
  baseline: BaselineTime;
}

interface LimitInput {
  configuredMs: number;
  /** The operator's ceiling; a configured limit above it counts as the ceiling (config checks refuse one). */
  ceilingMs: number;
  /** The baseline's duration, or null while it runs. */
  baselineMs: number | null;
}

/** The limit a gate's (or proof's) test run gets now. */
export function gateTimeLimit(input: LimitInput): TestTimeLimit {
  const ceilingMs = Math.max(input.ceilingMs, input.configuredMs);
  const { configuredMs, baselineMs } = input;
  const wanted =
    baselineMs === null
      ? BASELINE_FACTOR * configuredMs
      : Math.max(configuredMs, BASELINE_FACTOR * baselineMs);
  return {
    timeoutMs: Math.min(ceilingMs, Math.ceil(wanted)),
    configuredMs,
    ceilingMs,
    baseline: baselineMs === null ? { kind: "running" } : { kind: "measured", ms: baselineMs },
  };
}
