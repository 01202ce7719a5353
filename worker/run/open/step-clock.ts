import type { RunStep, RunTimings } from "../../run-end.js";

/** Where a run's time went: each step's lap, or the durations a step measured itself. */
interface StepClock {
  readonly timings: RunTimings;
  /** Adds the time since the last lap (or `add`) to `step`. */
  lap(step: RunStep): void;
  /** Adds durations a step measured itself (its wall time split its own way); the next lap starts now. */
  add(timings: RunTimings): void;
}

export function stepClock(): StepClock {
  const timings: RunTimings = {};
  let mark = Date.now();
  return {
    timings,
    lap(step) {
      const now = Date.now();
      timings[step] = (timings[step] ?? 0) + (now - mark);
      mark = now;
    },
    add(measured) {
      for (const [key, ms] of Object.entries(measured) as [keyof RunTimings, number][])
        timings[key] = (timings[key] ?? 0) + ms;
      mark = Date.now();
    },
  };
}
