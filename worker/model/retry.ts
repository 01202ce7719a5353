/**
 * What the openai SDK's own retries lack. The SDK retries connection failures, timeouts, 408, 409,
 * 429 and 5xx (`maxRetries`, exponential backoff from 0.5 s to 8 s, Retry-After and retry-after-ms
 * honoured, `x-should-retry` obeyed). It is given this fetch, which adds:
 * - a cap on Retry-After: a response asking for a longer wait is marked `x-should-retry: false`, so
 *   the SDK gives up at once instead of parking the job for as long as the provider asks (a daily
 *   quota answers "come back in an hour");
 * - the body read inside fetch: a connection that drops mid-body ("TypeError: terminated") is then
 *   a failed fetch, which the SDK retries like any other connection failure. Read later by the SDK,
 *   it escaped the retries and ended the run;
 * - a report of each retry (onRetry), for the CLI and the worker's log.
 */

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

export interface RetryEvent {
  /** 1 for the first retry. */
  attempt: number;
  /** Why the previous attempt failed ("HTTP 503", "terminated"). */
  reason: string;
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The header the SDK sets on every attempt: 0 on the first, n on retry n. */
const RETRY_COUNT_HEADER = "x-stainless-retry-count";

/** A fetch for the SDK client: Retry-After capped at `maxRetryAfterMs`, the body read whole, retries reported. */
export function modelFetch(options: {
  maxRetryAfterMs: number;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  fetch?: Fetch;
}): Fetch {
  const fetch = options.fetch ?? globalThis.fetch;
  let lastFailure = "";
  return async (input, init) => {
    const attempt = Number(new Headers(init?.headers).get(RETRY_COUNT_HEADER) ?? 0);
    if (attempt > 0) options.onRetry?.({ attempt, reason: lastFailure });
    try {
      const response = await fetch(input, init);
      // Buffered here, a body cut short fails this fetch (retried) instead of the SDK's later read.
      const body = await response.arrayBuffer();
      const headers = new Headers(response.headers);
      if (!response.ok) lastFailure = `HTTP ${response.status}`;
      const retryAfterMs = parseRetryAfter(headers);
      if (!response.ok && retryAfterMs !== undefined && retryAfterMs > options.maxRetryAfterMs)
        headers.set("x-should-retry", "false");
      return new Response(body, { status: response.status, statusText: response.statusText, headers });
    } catch (error) {
      lastFailure = error instanceof Error ? error.message : String(error);
      throw error;
    }
  };
}

/**
 * Runs `operation` with a signal of its own that follows `signal`, unhooks it afterwards, and
 * rejects as soon as `signal` aborts. The openai SDK adds an abort listener to the signal it is
 * given and never removes it: given the run's signal, every model call would leave one behind (Node
 * warns past 10). And it sleeps between retries without watching the signal: a cancel during a
 * Retry-After of two minutes would wait them out.
 */
export async function withLinkedSignal<T>(
  signal: AbortSignal | undefined,
  operation: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (!signal) return operation(undefined);
  const linked = new AbortController();
  let stop: (reason: unknown) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = reject;
  });
  const follow = () => {
    linked.abort(signal.reason);
    stop(signal.reason);
  };
  if (signal.aborted) follow();
  else signal.addEventListener("abort", follow, { once: true });
  try {
    return await Promise.race([operation(linked.signal), stopped]);
  } finally {
    signal.removeEventListener("abort", follow);
  }
}
