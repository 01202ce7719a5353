/**
 * Why a job's run was stopped, through BullMQ's cancelJob, which takes a string: a person (or the issue
 * closing) cancelled it, this worker is shutting down, or it lost its lock on the job. The run's own signal
 * aborts with the decoded CancelReason (job-processor.ts).
 */
import type { CancelReason } from "../../src/shared/errors.js";

export function encodeAbortReason(reason: CancelReason): string {
  return JSON.stringify(reason);
}

export function decodeAbortReason(value: unknown): CancelReason {
  if (typeof value === "string") {
    try {
      const parsed = JSON.parse(value) as Partial<CancelReason>;
      if (parsed.kind === "cancelled" || parsed.kind === "shutdown" || parsed.kind === "lock_lost") {
        return { kind: parsed.kind, by: String(parsed.by ?? "someone"), reason: String(parsed.reason ?? "") };
      }
    } catch {
      // not ours: fall through
    }
  }
  return { kind: "cancelled", by: "someone", reason: String(value ?? "cancelled") };
}
