/**
 * The GitHub Marketplace plan of each account, by account id, as `marketplace_purchase` events set it
 * (webhook process); the worker reads it to pick the limits that apply (worker/jobs/admission-limits.ts).
 * An account without a record (never bought, or cancelled) gets the operator's default limits.
 */
import type { Redis } from "ioredis";
import { z } from "zod";
import { planKey, type QueueNames } from "./keys.js";

export const accountPlanSchema = z.object({
  /** The plan's id in the Marketplace listing. */
  id: z.number().int(),
  name: z.string(),
  accountLogin: z.string(),
  /** When GitHub said it took effect (effective_date). */
  since: z.string(),
});
export type AccountPlan = z.infer<typeof accountPlanSchema>;

export async function setAccountPlan(
  redis: Pick<Redis, "set">,
  names: QueueNames,
  accountId: number,
  plan: AccountPlan,
): Promise<void> {
  await redis.set(planKey(names, accountId), JSON.stringify(accountPlanSchema.parse(plan)));
}

export async function clearAccountPlan(redis: Pick<Redis, "del">, names: QueueNames, accountId: number) {
  await redis.del(planKey(names, accountId));
}

/** The account's plan, or null (none, or a record this version cannot read). */
export async function readAccountPlan(
  redis: Pick<Redis, "get">,
  names: QueueNames,
  accountId: number,
): Promise<AccountPlan | null> {
  const raw = await redis.get(planKey(names, accountId));
  if (!raw) return null;
  const parsed = accountPlanSchema.safeParse(JSON.parse(raw));
  return parsed.success ? parsed.data : null;
}
