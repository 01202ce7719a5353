/**
 * Retries of GitHub requests without a Bottleneck limiter around each one. @octokit/plugin-throttling
 * retries a rate-limited request through a local Bottleneck limiter, and Probot's @octokit/plugin-retry
 * builds another one per request for server errors; a local limiter yields to the timers several times
 * per job (setTimeout 0 each), which cost 10-25 ms per request on a busy host, on every GitHub call of
 * the webhook and of the run (bench/pipeline.ts). The same policies, run in a plain loop:
 * - `RequestRetries` is plugin-throttling's `retryLimiter`: it runs the request and, when it fails, asks
 *   the plugin's "failed" listener, which answers the milliseconds to wait before the next attempt
 *   (the wait GitHub asked for, if the limit handler allows it) or nothing to give up.
 * - `serverErrorRetries` is plugin-retry's policy: an error status other than those retrying cannot help
 *   (400, 401, 403, 404, 410, 422, 451; rate limits are plugin-throttling's) is tried again up to three
 *   times, 1, 4 and 9 seconds apart.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ProbotOctokit } from "probot";

/** What a "failed" listener is told (Bottleneck's event info, as plugin-throttling reads it). */
interface FailedInfo<A extends unknown[]> {
  args: A;
  retryCount: number;
}

type FailedListener = (error: unknown, info: FailedInfo<never>) => unknown;

/** Bottleneck's retry contract without its queue: `failed` listeners may answer a wait in ms. */
export class RequestRetries {
  private readonly failed: FailedListener[] = [];

  /** Bottleneck's `on`; only "failed" is ever listened to (by plugin-throttling). */
  on(event: string, listener: FailedListener): void {
    if (event !== "failed")
      throw new Error(`RequestRetries emits only "failed", not "${event}": extend it before listening`);
    this.failed.push(listener);
  }

  async schedule<A extends unknown[], T>(job: (...args: A) => Promise<T>, ...args: A): Promise<T> {
    for (let retryCount = 0; ; retryCount++) {
      try {
        return await job(...args);
      } catch (error) {
        const info = { args, retryCount } as FailedInfo<never>;
        const answers = await Promise.all(this.failed.map((listener) => listener(error, info)));
        const wait = answers.find((answer): answer is number => typeof answer === "number");
        if (wait === undefined) throw error;
        await sleep(wait);
      }
    }
  }
}

/** Statuses a retry cannot change (plugin-retry's `doNotRetry`); 403/429 limits are waited out by plugin-throttling. */
const DO_NOT_RETRY = new Set([400, 401, 403, 404, 410, 422, 451]);
const SERVER_ERROR_RETRIES = 3;

/** The status of an Octokit RequestError (a network failure is one, status 500); undefined for others. */
function requestErrorStatus(error: unknown): number | undefined {
  const e = error as { status?: unknown; request?: unknown } | null;
  return typeof e?.status === "number" && e.request !== undefined ? e.status : undefined;
}

/**
 * An Octokit plugin: a request that failed with a server error (or the network) is sent again, up to
 * three times, 1, 4 and 9 seconds apart (`baseMs` scales the waits: tests).
 */
export function serverErrorRetries(baseMs = 1000): Parameters<typeof ProbotOctokit.plugin>[0] {
  return (octokit) => {
    octokit.hook.wrap("request", async (request, options) => {
      for (let retryCount = 0; ; retryCount++) {
        try {
          return await request(options);
        } catch (error) {
          const status = requestErrorStatus(error);
          const retryable = status !== undefined && status >= 400 && !DO_NOT_RETRY.has(status);
          if (!retryable || retryCount >= SERVER_ERROR_RETRIES) throw error;
          await sleep((retryCount + 1) ** 2 * baseMs);
        }
      }
    });
  };
}
