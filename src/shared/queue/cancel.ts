/**
 * Cancellation that reaches the job wherever it runs. A waiting job is removed; an active one is
 * signalled on a pub/sub channel that every worker subscribes to, and the worker holding it calls
 * `worker.cancelJob(id)`. A flag with a TTL covers the gap between "picked up" and "subscribed".
 */
import type { Redis } from "ioredis";
import { z } from "zod";
import type { FixQueue } from "./fix-queue.js";
import { type FixJobData, parseFixJobData } from "./job.js";
import { cancelFlagKey } from "./keys.js";

export const cancelRequestSchema = z.object({
  jobId: z.string().min(1),
  /** Login of the person who cancelled, or a reason such as "issue closed". */
  by: z.string().min(1),
  reason: z.string().min(1),
  at: z.string(),
});
export type CancelRequest = z.infer<typeof cancelRequestSchema>;

const FLAG_TTL_S = 60 * 60;

type CancelOutcome =
  /** The job was waiting or delayed and has been removed: it will never run. */
  | { status: "removed"; jobId: string; data: FixJobData }
  /** The job is running: every worker was told; the one holding it aborts it. */
  | { status: "signalled"; jobId: string; data: FixJobData }
  /** Nothing queued or running for this id. */
  | { status: "none"; jobId: string };

export async function requestCancel(
  fixQueue: FixQueue,
  jobId: string,
  by: string,
  reason: string,
): Promise<CancelOutcome> {
  const job = await fixQueue.queue.getJob(jobId);
  if (!job) return { status: "none", jobId };
  const state = await job.getState();
  if (state === "completed" || state === "failed" || state === "unknown") return { status: "none", jobId };
  const data = parseFixJobData(job.data);
  const request: CancelRequest = { jobId, by, reason, at: new Date().toISOString() };
  const message = JSON.stringify(request);
  await fixQueue.redis.set(cancelFlagKey(fixQueue, jobId), message, "EX", FLAG_TTL_S);
  if (state !== "active") {
    // remove() fails when a worker took the lock in the meantime: then it is active, so signal it.
    const removed = await job.remove().then(
      () => true,
      () => false,
    );
    if (removed) return { status: "removed", jobId, data };
  }
  await fixQueue.redis.publish(fixQueue.cancelChannel, message);
  return { status: "signalled", jobId, data };
}

/** For the processor at job start: a cancel that arrived before its worker could hear it. */
export async function readCancelRequest(
  fixQueue: Pick<FixQueue, "prefix" | "name" | "redis">,
  jobId: string,
): Promise<CancelRequest | null> {
  const raw = await fixQueue.redis.get(cancelFlagKey(fixQueue, jobId));
  if (!raw) return null;
  const parsed = cancelRequestSchema.safeParse(JSON.parse(raw));
  return parsed.success ? parsed.data : null;
}

/**
 * Subscribes `subscriber` (a dedicated connection: a subscribed client can do nothing else) to the
 * cancel channel. Returns a function that unsubscribes.
 */
export async function subscribeToCancels(
  subscriber: Redis,
  channel: string,
  onCancel: (request: CancelRequest) => void,
): Promise<() => Promise<void>> {
  const listener = (from: string, message: string) => {
    if (from !== channel) return;
    let body: unknown;
    try {
      body = JSON.parse(message);
    } catch {
      return; // not a cancel request (we publish only JSON here): nothing to do
    }
    const parsed = cancelRequestSchema.safeParse(body);
    if (parsed.success) onCancel(parsed.data);
  };
  subscriber.on("message", listener);
  await subscriber.subscribe(channel);
  return async () => {
    subscriber.off("message", listener);
    await subscriber.unsubscribe(channel);
  };
}
