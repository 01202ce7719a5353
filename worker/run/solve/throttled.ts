/**
 * Status updates during the agent's steps: at most one every `intervalMs`, the latest one winning, and
 * never awaited by the loop (a slow GitHub must not slow the agent) nor allowed to throw into it.
 * Bottleneck spaces the updates (`minTime`) and drops the waiting one on stop; which value goes out is
 * decided when it goes out, not when it was pushed, so a burst of steps sends only the last.
 */
import Bottleneck from "bottleneck";
import { progressIsBestEffort } from "../open/status-comment.js";

interface Throttled<T> {
  push(value: T): void;
  /** Drops the waiting update; later pushes do nothing. */
  stop(): void;
}

export function throttled<T>(update: (value: T) => Promise<void>, intervalMs: number): Throttled<T> {
  const limiter = new Bottleneck({ minTime: intervalMs });
  let latest: { value: T } | null = null;
  let stopped = false;
  const send = () => {
    const next = latest;
    latest = null;
    // Not awaited: the limiter spaces the starts, as GitHub is asked at most once per interval.
    if (next) void update(next.value).catch(progressIsBestEffort);
  };
  return {
    push(value) {
      if (stopped) return;
      const waiting = latest !== null;
      latest = { value };
      // Bottleneck rejects a job only when stop() drops it: nothing to do then.
      if (!waiting) limiter.schedule(async () => send()).catch(() => {});
    },
    // Called before any final status, so a late step line can never overwrite it.
    stop() {
      stopped = true;
      latest = null;
      limiter.stop({ dropWaitingJobs: true }).catch(() => {});
    },
  };
}
