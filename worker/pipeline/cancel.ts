import type { CancelReason } from "../../src/errors.js";

/** Why a run's AbortSignal fired: a person (or the issue closing) cancelled it, or the worker is stopping. */
export type AbortReason = CancelReason;

/** BullMQ's cancelJob takes a string reason; it becomes the signal's `reason`. */
export function encodeAbortReason(reason: AbortReason): string {
  return JSON.stringify(reason);
}

export function decodeAbortReason(value: unknown): AbortReason {
  if (typeof value === "string") {
    try {
      const parsed = JSON.parse(value) as Partial<AbortReason>;
      if (parsed.kind === "cancelled" || parsed.kind === "shutdown" || parsed.kind === "lock_lost") {
        return { kind: parsed.kind, by: String(parsed.by ?? "someone"), reason: String(parsed.reason ?? "") };
      }
    } catch {
      // not ours: fall through
    }
  }
  return { kind: "cancelled", by: "someone", reason: String(value ?? "cancelled") };
}

/** Errors that ended a run because it was cancelled (the run's metrics tell them from failures). */
const cancelledRuns = new WeakSet<object>();

export function markCancelled<E extends Error>(error: E): E {
  cancelledRuns.add(error);
  return error;
}

export function isCancelledRun(error: unknown): boolean {
  return typeof error === "object" && error !== null && cancelledRuns.has(error);
}
