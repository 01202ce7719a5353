/**
 * How the agent loop ends. Every ending (a submission, a limit, a cancellation) is thrown as a
 * `LoopExit` from wherever in a step it is found, and caught in one place, as mini-swe-agent does with
 * its flow-control exceptions; the exit is then recorded once as a `RunExit` and its text.
 */
import type { ExitReason, ExitStatus, RunExit } from "../../src/shared/contracts.js";

/** The endings where the agent was stopped from outside its work: what it did so far is kept. */
export type LimitReason = Extract<
  ExitReason,
  | "exit_step_limit"
  | "exit_cost"
  | "exit_time"
  | "exit_context"
  | "exit_api"
  | "exit_format"
  | "exit_replay_exhausted"
>;

/** Ends the loop; not an error. */
export abstract class LoopExit extends Error {
  abstract readonly reason: ExitReason;
  /** The workspace's diff becomes the submission when none was recorded: no paid-for work is lost. */
  abstract readonly keepsWork: boolean;
}

/** The submission was accepted (`submitted`), or the gate failed on its last attempt (`exit_gate`). */
export class Submitted extends LoopExit {
  readonly keepsWork = false;
  constructor(readonly reason: "submitted" | "exit_gate") {
    super(reason);
  }
}

/** A limit ended the run; `detail` (a model error's message) is recorded as info.error. */
export class LimitReached extends LoopExit {
  readonly keepsWork = true;
  constructor(
    readonly reason: LimitReason,
    readonly detail?: string,
  ) {
    super(detail ?? reason);
  }
}

/** The run's signal fired. */
export class Cancelled extends LoopExit {
  readonly reason = "exit_cancelled";
  readonly keepsWork = false;
}

/**
 * The trajectory info's mark (true) of a model call cancelled on its way: its tokens are not known, and
 * what reports the run's spend says so rather than drop the call without a word.
 */
export const MODEL_CALL_CANCELLED = "model_call_cancelled";

/**
 * The exit of a loop that recorded `submission`: a change is never reported as submitted when it is
 * empty, and a run that ended otherwise with a change says `submitted (REASON)`.
 */
export function runExit(reason: ExitReason, submission: string | null): RunExit {
  return { reason, keptChange: reason !== "submitted" && Boolean(submission?.trim()) };
}

export function exitStatusText(exit: RunExit): ExitStatus {
  return exit.keptChange && exit.reason !== "submitted" ? `submitted (${exit.reason})` : exit.reason;
}

/** Reads a recorded exit status back; null for none (the run stopped before it recorded one). */
export function exitOf(status: ExitStatus | null): RunExit | null {
  if (status === null) return null;
  const kept = /^submitted \((exit_[a-z_]+)\)$/.exec(status)?.[1];
  return kept
    ? { reason: kept as ExitReason, keptChange: true }
    : { reason: status as ExitReason, keptChange: false };
}
