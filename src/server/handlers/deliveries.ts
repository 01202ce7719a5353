/**
 * Each signed webhook body is acted on once, whatever X-GitHub-Delivery it comes with: a replay (a
 * captured body re-sent, GitHub's "Redeliver", a redelivery of a handled delivery) is answered 2xx
 * and does nothing. The body's digest comes from the webhook guard (src/server/webhook-guard.ts), which
 * verified its signature; the server runs Probot's middleware inside withSignedBody so the handler,
 * which Probot gives only the parsed payload, still knows which bytes it is handling.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "probot";
import { WebhookBodyInFlightError } from "../../shared/errors.js";
import { claimSignedBody, HANDLING_TTL_S, releaseSignedBody, rememberSignedBody } from "../signed-bodies.js";
import type { HandlerDeps } from "./deps.js";

const signedBody = new AsyncLocalStorage<string>();

/** Runs `handle` (Probot's middleware for one request) knowing the digest of its verified body. */
export function withSignedBody<T>(digest: string, handle: () => Promise<T>): Promise<T> {
  return signedBody.run(digest, handle);
}

/**
 * Wraps an event handler so that a body already acted on is skipped (answered 2xx), and one being
 * handled right now is answered 409 (not taken: if the other request never finishes, it may come again).
 */
export function oncePerSignedBody<C extends { id: string; log: Logger }>(
  deps: HandlerDeps,
  handle: (context: C) => Promise<void>,
): (context: C) => Promise<void> {
  return async (context) => {
    const digest = signedBody.getStore();
    // Every POST passes the guard first (src/server/app-server.ts); an event without a digest did not, and
    // without one a replay could not be told apart: refuse rather than act.
    if (!digest)
      throw new Error("webhook event without a verified body digest: route POSTs through the webhook guard");
    const claim = await claimSignedBody(deps.queue, digest);
    if (claim === "handled") {
      context.log.info(
        { delivery: context.id, bodySha256: digest },
        "signed body already handled (a redelivery or a replay under another delivery id): nothing to do",
      );
      return;
    }
    if (claim === "handling") throw new WebhookBodyInFlightError(HANDLING_TTL_S);
    try {
      await handle(context);
    } catch (error) {
      // Not acted on: GitHub's redelivery of it must be taken. Failing to release only delays that
      // until the claim lapses.
      await releaseSignedBody(deps.queue, digest).catch(() => {});
      throw error;
    }
    // The work is done: failing to remember it must not fail the delivery; the claim still holds a while.
    await rememberSignedBody(deps.queue, digest).catch((error: unknown) =>
      context.log.warn({ err: error, delivery: context.id }, "could not remember the signed body"),
    );
  };
}
