/** What the steps of one run (worker/pipeline/run.ts) share. */
import type { Trajectory } from "../../src/contracts.js";
import type { TestRun } from "./baseline.js";
import type { cloneRepository } from "./checkout.js";
import type { TestedChange, TestProof } from "./gate.js";
import type { PipelineRepoConfig, RunInput, RunStep, RunTimings } from "./types.js";

export interface RunState<C extends PipelineRepoConfig> extends StepClock {
  input: RunInput<C>;
  /** The run's checkout directory (the clone, the prepared tree, scratch files). */
  root: string;
  /** The sandboxes' removal, awaited before the status says done and before the run ends. */
  disposal?: Promise<void> | undefined;
}

interface StepClock {
  timings: RunTimings;
  /** Adds the time since the last lap to `step`. */
  lap: (step: RunStep) => void;
}

export type Checkout = Awaited<ReturnType<typeof cloneRepository>>;

/** The change that passed the gate, with what the pull request tells about it. */
export interface Gated {
  kind: "gated";
  trajectory: Trajectory;
  baseline: TestRun;
  proof: TestProof;
  tested: TestedChange;
}

export function stepClock(): StepClock {
  const timings: RunTimings = {};
  let mark = Date.now();
  const lap = (step: RunStep) => {
    const now = Date.now();
    timings[step] = (timings[step] ?? 0) + (now - mark);
    mark = now;
  };
  return { timings, lap };
}
