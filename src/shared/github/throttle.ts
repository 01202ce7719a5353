/**
 * GitHub's rate limits, waited out in the webhook process and in the worker alike. Probot 14 only
 * logs a secondary rate limit (403 or 429 with retry-after and "secondary rate limit" in the
 * message) and gives the request up, so a status comment or a pull request was lost to a burst.
 * Here @octokit/plugin-throttling retries after the wait GitHub asks for, up to `maxRetries` times and
 * `maxWaitSeconds` per wait. With Probot's `redisConfig` the plugin's limiters live in Redis, so every
 * process of a deployment spaces its writes together; `id` keeps two apps on one Redis apart.
 */
import { ProbotOctokit } from "probot";
import { type GitHubCaller, metrics } from "../metrics/registry.js";
import { RequestRetries, serverErrorRetries } from "./request-retries.js";

interface ThrottleSettings {
  /** Limiters' name in Redis: one per app. */
  id: string;
  /** Client-side spacing of writes (a second apart, as GitHub advises); off only against stand-ins. */
  spacing: boolean;
  /** A longer wait fails the request instead (the webhook process must answer GitHub within 10 s). */
  maxWaitSeconds: number;
  /** Retries of one request after limits. */
  maxRetries: number;
  /** The `process` label of this client's metrics. */
  caller: GitHubCaller;
}

/** The webhook process: waits that fit in GitHub's 10 s for a delivery; longer ones fail fast. */
export const WEBHOOK_THROTTLE = { maxWaitSeconds: 5, maxRetries: 2, caller: "webhook" } as const;
/** The worker: a run takes minutes anyway; waiting out a limit beats losing the run's result. */
export const WORKER_THROTTLE = { maxWaitSeconds: 15 * 60, maxRetries: 4, caller: "worker" } as const;

type LimitHandler = (
  retryAfter: number,
  options: { method: string; url: string },
  octokit: { log: { warn(message: string): void } },
  retryCount: number,
) => boolean;

function waitOut(kind: "primary" | "secondary", settings: ThrottleSettings): LimitHandler {
  const what = kind === "primary" ? "rate limit" : "secondary rate limit";
  const labels = { process: settings.caller, kind };
  return (retryAfter, options, octokit, retryCount) => {
    const request = `${options.method} ${options.url}`;
    if (retryCount >= settings.maxRetries || retryAfter > settings.maxWaitSeconds) {
      metrics.githubRateLimits.inc({ ...labels, action: "gave_up" });
      octokit.log.warn(
        `GitHub ${what} on ${request}: not retried (wait ${retryAfter} s, retry ${retryCount})`,
      );
      return false;
    }
    metrics.githubRateLimits.inc({ ...labels, action: "waited" });
    metrics.githubRateLimitWait.inc({ process: settings.caller }, retryAfter);
    octokit.log.warn(`GitHub ${what} on ${request}: retrying in ${retryAfter} s`);
    return true;
  };
}

type Fetch = typeof globalThis.fetch;

/**
 * The client's fetch, counting every answer of 400 and above and every network failure: each attempt,
 * beneath the retry and throttling plugins, so a 502 that a retry got past still shows.
 */
function countingFetch(caller: GitHubCaller, inner: Fetch = globalThis.fetch): Fetch {
  return async (input, init) => {
    try {
      const response = await inner(input, init);
      if (response.status >= 400)
        metrics.githubErrors.inc({ process: caller, status: String(response.status) });
      return response;
    } catch (error) {
      metrics.githubErrors.inc({ process: caller, status: "network" });
      throw error;
    }
  };
}

/**
 * Limiters that limit nothing, in the shape plugin-throttling calls (`group.key(id).schedule(options,
 * job, ...args)`): without spacing (stand-ins) a Bottleneck group would only add its own latency.
 */
const passThrough = {
  key: () => ({
    schedule: <A extends unknown[], T>(_options: unknown, job: (...args: A) => T, ...args: A) => job(...args),
  }),
};
const unspacedGroups = {
  global: passThrough,
  auth: passThrough,
  write: passThrough,
  search: passThrough,
  notifications: passThrough,
};

/**
 * Probot's Octokit with rate limits waited out and server errors retried; pass it as Probot's
 * `Octokit`. Both retries run in plain loops (request-retries.ts); with spacing on, the plugin's
 * limiters (in the deployment's Redis) still space the writes.
 */
export function throttledOctokit(settings: ThrottleSettings): typeof ProbotOctokit {
  // The function form: an object passed to defaults() would lose to Probot's own throttle options.
  return ProbotOctokit.plugin(serverErrorRetries()).defaults((options: Record<string, unknown>) => {
    const request = (options.request ?? {}) as { fetch?: Fetch };
    return {
      ...options,
      request: { ...request, fetch: countingFetch(settings.caller, request.fetch) },
      // Probot's plugin-retry builds a Bottleneck per request: serverErrorRetries has its policy instead.
      retry: { ...(options.retry as object), enabled: false },
      throttle: {
        ...(options.throttle as object),
        enabled: true,
        id: settings.id,
        onSecondaryRateLimit: waitOut("secondary", settings),
        onRateLimit: waitOut("primary", settings),
        retryLimiter: new RequestRetries(),
        ...(settings.spacing ? {} : unspacedGroups),
      },
    };
  }) as typeof ProbotOctokit;
}

/** Whether GitHub refused a request for a rate limit (primary or secondary), as the plugin tells them. */
export function isRateLimited(error: unknown): boolean {
  const e = error as {
    status?: number;
    message?: string;
    response?: { headers?: Record<string, string | undefined> };
  };
  if (e?.status !== 403 && e?.status !== 429) return false;
  const headers = e.response?.headers ?? {};
  return (
    /\bsecondary rate\b/i.test(e.message ?? "") ||
    headers["retry-after"] !== undefined ||
    headers["x-ratelimit-remaining"] === "0"
  );
}
