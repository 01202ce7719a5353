/**
 * Signed webhook bodies already handled, by the SHA-256 of their bytes. The signature covers the body
 * only, not X-GitHub-Delivery: a captured body re-sent under a new delivery id verifies like the
 * original, and GitHub's own "Redeliver" sends the same bytes again too. Handled a second time such a
 * body would start a second run, which replaces the branch and its review commits. A body is claimed
 * while its handler runs (so two copies at once do not both act) and remembered only once the handler
 * succeeded: one whose handling failed, or never finished (the server died before queueing), is
 * released and taken again when it comes again.
 */
import type { Redis } from "ioredis";
import { type QueueNames, signedBodyKey } from "../shared/queue/keys.js";

/**
 * How long a handled body is remembered. GitHub lets a delivery be redelivered for 3 days; 8 leaves
 * room for clock and queue delays. Past it a replayed body is handled again, and the worker's check
 * against GitHub (worker/run/open/still-wanted.ts) is what stands: it runs only what is true then.
 */
const HANDLED_TTL_S = 8 * 24 * 60 * 60;

/**
 * A claim outlives any handler (they read GitHub, waiting out its rate limits for seconds at most, and
 * enqueue) but not a crashed server's for long: a body it held is taken again once this has passed.
 */
export const HANDLING_TTL_S = 2 * 60;

const HANDLING = "handling";

interface SignedBodyStore extends QueueNames {
  readonly redis: Pick<Redis, "set" | "get" | "del">;
}

/** Claims the body for this handler: "claimed", or why not (acted on before, or being handled now). */
export async function claimSignedBody(
  store: SignedBodyStore,
  digest: string,
): Promise<"claimed" | "handled" | "handling"> {
  const key = signedBodyKey(store, digest);
  if ((await store.redis.set(key, HANDLING, "EX", HANDLING_TTL_S, "NX")) === "OK") return "claimed";
  // Two calls, not SET NX GET (Redis 7 only); a claim that lapsed between them counts as in flight.
  const before = await store.redis.get(key);
  return before === null || before === HANDLING ? "handling" : "handled";
}

/** The handler acted on the body: a replay of it, under any delivery id, does nothing for HANDLED_TTL_S. */
export async function rememberSignedBody(store: SignedBodyStore, digest: string): Promise<void> {
  await store.redis.set(
    signedBodyKey(store, digest),
    `handled ${new Date().toISOString()}`,
    "EX",
    HANDLED_TTL_S,
  );
}

/** The handler failed: the body was not acted on, so a redelivery of it is taken. */
export async function releaseSignedBody(store: SignedBodyStore, digest: string): Promise<void> {
  await store.redis.del(signedBodyKey(store, digest));
}
