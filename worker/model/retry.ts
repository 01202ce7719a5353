/**
 * Retrying transient model API failures: exponential backoff with jitter, honouring Retry-After,
 * a bounded number of times. Kept apart from the SDK (which runs with maxRetries 0) so the
 * behaviour is ours, observable and testable.
 */
import type { RetryConfig } from "../config/model.js";

export interface RetryDecision {
  retryable: boolean;
  /** Server-requested wait (Retry-After / retry-after-ms), when it sent one. */
  retryAfterMs?: number;
}

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  error: unknown;
}

/** Parses Retry-After (seconds or an HTTP date) and the non-standard retry-after-ms. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now = Date.now()) {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The wait before retry number `attempt` (1-based), without a server hint. */
export function backoffDelay(
  config: RetryConfig,
  attempt: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(config.maxDelayMs, config.initialDelayMs * config.multiplier ** (attempt - 1));
  const spread = base * config.jitter;
  return Math.max(0, Math.round(base - spread + 2 * spread * random()));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs `operation` with a signal of its own that follows `signal`, and unhooks it afterwards. The
 * openai SDK adds an abort listener to the signal it is given and never removes it: given the run's
 * signal, every model call would leave one behind (Node warns past 10). Given a signal per call, the
 * SDK's listener goes with it.
 */
export async function withLinkedSignal<T>(
  signal: AbortSignal | undefined,
  operation: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (!signal) return operation(undefined);
  const linked = new AbortController();
  const follow = () => linked.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener("abort", follow, { once: true });
  try {
    return await operation(linked.signal);
  } finally {
    signal.removeEventListener("abort", follow);
  }
}

export class RetryGaveUp extends Error {
  constructor(
    readonly attempts: number,
    readonly lastError: unknown,
    readonly reason: string,
  ) {
    super(reason, { cause: lastError });
  }
}

/**
 * Runs `operation` until it succeeds, a non-retryable error occurs (rethrown as is), or the retries
 * run out (RetryGaveUp). A Retry-After above `maxRetryAfterMs` gives up at once rather than stall a run.
 */
export async function withRetries<T>(
  operation: () => Promise<T>,
  options: {
    config: RetryConfig;
    classify: (error: unknown) => RetryDecision;
    signal?: AbortSignal;
    onRetry?: (event: RetryEvent) => void;
    random?: () => number;
    sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  },
): Promise<T> {
  const wait = options.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const decision = options.classify(error);
      if (!decision.retryable) throw error;
      if (attempt > options.config.maxRetries) {
        throw new RetryGaveUp(attempt, error, `gave up after ${attempt} attempts`);
      }
      let delayMs = backoffDelay(options.config, attempt, options.random);
      if (decision.retryAfterMs !== undefined) {
        if (decision.retryAfterMs > options.config.maxRetryAfterMs) {
          throw new RetryGaveUp(
            attempt,
            error,
            `the server asked to wait ${Math.round(decision.retryAfterMs / 1000)} s, more than the ${Math.round(options.config.maxRetryAfterMs / 1000)} s allowed (model.retry.maxRetryAfterMs)`,
          );
        }
        delayMs = decision.retryAfterMs;
      }
      options.onRetry?.({ attempt, delayMs, error });
      await wait(delayMs, options.signal);
    }
  }
}
