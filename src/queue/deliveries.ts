/**
 * Webhook deliveries already handled, by X-GitHub-Delivery. GitHub (or a person in the app's
 * settings) may send a delivery again, also long after the run it started has finished; handled a
 * second time it would start a second run, which replaces the branch and its review commits. A
 * delivery is remembered only once its handler succeeded, so one that failed is still taken when it
 * comes again.
 */
import type { Redis } from "ioredis";
import { deliveryKey, type QueueNames } from "./keys.js";

/** GitHub lets a delivery be redelivered for up to 3 days; a week leaves room for clock and queue delays. */
const DELIVERY_TTL_S = 7 * 24 * 60 * 60;

interface DeliveryStore extends QueueNames {
  readonly redis: Pick<Redis, "exists" | "set">;
}

export async function deliveryHandled(store: DeliveryStore, deliveryId: string): Promise<boolean> {
  return (await store.redis.exists(deliveryKey(store, deliveryId))) === 1;
}

export async function rememberDelivery(store: DeliveryStore, deliveryId: string): Promise<void> {
  await store.redis.set(deliveryKey(store, deliveryId), new Date().toISOString(), "EX", DELIVERY_TTL_S);
}
