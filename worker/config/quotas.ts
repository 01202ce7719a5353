/**
 * Schema of the `quotas:` section of config/default.yaml: how runs are shared between installations
 * (worker/jobs/admission.ts). The top-level limits apply to an account without a Marketplace plan; `plans`
 * gives a plan's own, by plan id or name, each key falling back to the top level. null: no limit.
 */
import { z } from "zod";

const limitFields = {
  runsAtOnce: z
    .number()
    .int()
    .positive()
    .describe("Runs of one installation at the same time; more wait for one of them to end."),
  monthlyBudgetUsd: z
    .number()
    .nonnegative()
    .nullable()
    .describe(
      "Model cost of one installation per calendar month (UTC), in USD; over it, runs are refused. null: no limit.",
    ),
  runsPerDayPerRepository: z
    .number()
    .int()
    .nonnegative()
    .nullable()
    .describe("Runs one repository may start per day (UTC); more are refused. null: no limit."),
};

export const quotaLimitsSchema = z.strictObject(limitFields);
export type QuotaLimits = z.infer<typeof quotaLimitsSchema>;

export const quotasConfigSchema = z
  .strictObject({
    runsAtOnce: limitFields.runsAtOnce.default(2),
    monthlyBudgetUsd: limitFields.monthlyBudgetUsd.default(50),
    runsPerDayPerRepository: limitFields.runsPerDayPerRepository.default(20),
    plans: z
      .record(z.string().min(1), quotaLimitsSchema.partial())
      .default({})
      .describe(
        'Marketplace plans by id (`"435"`) or name (`"Basic Plan"`): any of the three limits above, each falling back to the top level.',
      ),
    leaseSeconds: z
      .number()
      .int()
      .positive()
      .default(60)
      .describe(
        "How long a slot lives without its worker renewing it: the time a dead worker's slot takes to come back.",
      ),
    recheckSeconds: z
      .number()
      .int()
      .positive()
      .default(60)
      .describe(
        "A run waiting for a slot looks again after this long even if nobody wakes it (its waker died).",
      ),
  })
  .describe(
    "How runs are shared between installations (worker/jobs/admission.ts). The top-level limits apply to accounts without a Marketplace plan; null means no limit.",
  );
export type QuotasConfig = z.infer<typeof quotasConfigSchema>;
