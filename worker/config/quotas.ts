/**
 * Schema of the `quotas:` section of config/default.yaml: how runs are shared between installations
 * (worker/fairness/). The top-level limits apply to an account without a Marketplace plan; `plans`
 * gives a plan's own, by plan id or name, each key falling back to the top level. null: no limit.
 */
import { z } from "zod";

const limitFields = {
  /** Runs of one installation at the same time; more wait for one of them to end. */
  runsAtOnce: z.number().int().positive(),
  /** Model cost of one installation per calendar month (UTC), in USD; over it, runs are refused. */
  monthlyBudgetUsd: z.number().nonnegative().nullable(),
  /** Runs one repository may start per day (UTC); more are refused. */
  runsPerDayPerRepository: z.number().int().nonnegative().nullable(),
};

export const quotaLimitsSchema = z.strictObject(limitFields);
export type QuotaLimits = z.infer<typeof quotaLimitsSchema>;

export const quotasConfigSchema = z.strictObject({
  runsAtOnce: limitFields.runsAtOnce.default(2),
  monthlyBudgetUsd: limitFields.monthlyBudgetUsd.default(50),
  runsPerDayPerRepository: limitFields.runsPerDayPerRepository.default(20),
  /** Marketplace plans by id (`"435"`) or name (`"Basic Plan"`): any of the three limits above. */
  plans: z.record(z.string().min(1), quotaLimitsSchema.partial()).default({}),
  /** How long a slot lives without its worker renewing it: the time a dead worker's slot takes to come back. */
  leaseSeconds: z.number().int().positive().default(60),
  /** A run waiting for a slot looks again after this long even if nobody wakes it (its waker died). */
  recheckSeconds: z.number().int().positive().default(60),
});
export type QuotasConfig = z.infer<typeof quotasConfigSchema>;
