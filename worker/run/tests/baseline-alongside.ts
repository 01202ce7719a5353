/**
 * The baseline, run alongside the agent: the baseline starts its own sandbox from the
 * prepared tree once the agent's is up (the first gate's with it), so the agent's first step never
 * waits for the tests. Its result
 * is needed only when the agent submits (the gate waits for it there) and when the agent ends. A baseline
 * that says the run cannot go on (the tests already fail, and the repository does not allow it) stops the
 * agent through its signal, and the run ends with the same status as when the baseline came first.
 */
import { BaselineStop } from "../../../src/shared/errors.js";
import type { RunSandboxes } from "../prepare/run-sandboxes.js";
import { runBaseline, type TestCommand, type TestRun } from "./test-run.js";

export interface Baseline {
  /** The agent's signal: the run's own, also aborted (with the baseline's error or a BaselineStop) when the baseline stops the run. */
  signal: AbortSignal;
  /** The baseline's run once it passed or may fail; rejects with BaselineStop or the baseline's own error. */
  settled: Promise<TestRun>;
  /** How long the baseline's tests ran, once they have (the gate's time limit follows it); null before. */
  measuredMs: () => number | null;
}

interface BaselineOptions {
  sandboxes: RunSandboxes;
  /** The prepared tree every sandbox of the run starts from. */
  dir: string;
  test: TestCommand;
  signal: AbortSignal;
  /** Why the run cannot go on after this baseline, or null when it can. */
  stopsRun: (run: TestRun) => string | null;
  /** Sandboxes started with the baseline's for the first submission: its gate's, and its proof's (2). */
  spares?: number;
}

export function startBaselineAlongside(options: BaselineOptions): Baseline {
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  let measuredMs: number | null = null;
  const running = options.sandboxes.using(options.dir, (sandbox) =>
    runBaseline(sandbox, options.test, options.signal),
  );
  // The first gate's sandbox (and its proof's) starts with the baseline's (using() has taken its own
  // already), not once it is up: an agent that submits quickly would otherwise wait for two starts in
  // series, and the submission's push would share the CPU with a sandbox starting.
  options.sandboxes.prewarm(options.dir, options.spares ?? 1);
  const settled = running.then(
    (run) => {
      measuredMs = run.durationMs;
      const reason = options.stopsRun(run);
      if (reason === null) return run;
      const error = new BaselineStop(reason, run);
      stop.abort(error);
      throw error;
    },
    (error: unknown) => {
      stop.abort(error);
      throw error;
    },
  );
  // Awaited by the gate and after the agent; this only keeps a rejection from being unhandled meanwhile.
  settled.catch(() => {});
  return { signal, settled, measuredMs: () => measuredMs };
}
