/**
 * Sign-in attempts limited per client address (express-rate-limit, counted in the deployment's Redis
 * through rate-limit-redis, so every server process shares the count): the shared-secret form and
 * GitHub's callback count only failures (a brute force of the secret or of OAuth codes), the start
 * of a GitHub sign-in counts every request (each writes a state to Redis). Past the limit: 429 with
 * Retry-After. The address is the connection's peer, or with AGENT_FIX_TRUST_PROXY the client address
 * the trusted proxies forwarded (X-Forwarded-For): without it every client behind a proxy shares the
 * proxy's, and a client's own X-Forwarded-For is never believed.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, Response } from "express";
import { ipKeyGenerator, type RateLimitRequestHandler, rateLimit } from "express-rate-limit";
import type { Redis } from "ioredis";
import { RedisStore } from "rate-limit-redis";
import { clientAddressOf, type TrustProxy } from "../../shared/config/trust-proxy.js";
import { signInLimitPrefix } from "../../shared/queue/keys.js";
import { html, sendPage } from "./html.js";

const WINDOW_MS = 15 * 60 * 1000;
/** Failed sign-ins (wrong secret, refused callback) per address and window. */
export const FAILED_SIGN_INS = 10;
/** GitHub sign-ins started per address and window. */
const STARTED_SIGN_INS = 30;

/** Whether the request may go on; false when it was answered 429. */
export type SignInGate = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export interface SignInLimits {
  failures: SignInGate;
  starts: SignInGate;
}

export function signInLimits(redis: Redis, keyPrefix: string, trust?: TrustProxy): SignInLimits {
  const address = clientAddressOf(trust);
  const store = (kind: "failures" | "starts") =>
    new RedisStore({
      prefix: signInLimitPrefix(keyPrefix, kind),
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as never,
    });
  return {
    failures: gate(
      rateLimit({
        ...common(address),
        limit: FAILED_SIGN_INS,
        store: store("failures"),
        skipSuccessfulRequests: true,
      }),
    ),
    starts: gate(rateLimit({ ...common(address), limit: STARTED_SIGN_INS, store: store("starts") })),
  };
}

function common(address: (req: IncomingMessage) => string) {
  return {
    windowMs: WINDOW_MS,
    standardHeaders: "draft-7" as const,
    legacyHeaders: false,
    // The dashboard is no express app (no req.ip): the address as AGENT_FIX_TRUST_PROXY says.
    keyGenerator: (req: Request) => ipKeyGenerator(address(req)),
    handler: (_req: Request, res: Response) => {
      const minutes = Math.ceil(Number(res.getHeader("retry-after") ?? 60) / 60);
      sendPage(
        res,
        429,
        "Too many sign-ins",
        html`<h1>Too many sign-in attempts</h1><p>Too many sign-ins from your address failed or started in the last 15 minutes. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.</p>`,
      );
    },
  };
}

function gate(limiter: RateLimitRequestHandler): SignInGate {
  return async (req, res) => {
    let passed = false;
    let failure: unknown;
    await limiter(req as Request, res as Response, (error?: unknown) => {
      if (error) failure = error;
      else passed = true;
    });
    if (failure) throw failure;
    return passed;
  };
}
