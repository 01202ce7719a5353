/** Each webhook delivery is handled once: a redelivery of a handled one is acknowledged and does nothing. */
import type { Logger } from "probot";
import { deliveryHandled, rememberDelivery } from "../queue/deliveries.js";
import type { HandlerDeps } from "./deps.js";

/** Wraps an event handler so that a delivery id it already handled is skipped (still answered 2xx). */
export function oncePerDelivery<C extends { id: string; log: Logger }>(
  deps: HandlerDeps,
  handle: (context: C) => Promise<void>,
): (context: C) => Promise<void> {
  return async (context) => {
    if (await deliveryHandled(deps.queue, context.id)) {
      context.log.info({ delivery: context.id }, "redelivery of a webhook already handled: nothing to do");
      return;
    }
    await handle(context);
    // The work is done: failing to remember it must not fail the delivery (GitHub would send it again).
    await rememberDelivery(deps.queue, context.id).catch((error: unknown) =>
      context.log.warn({ err: error, delivery: context.id }, "could not remember the delivery"),
    );
  };
}
