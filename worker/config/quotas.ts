/**
 * Schema of the `quotas:` section of config/default.yaml: how runs are shared between installations
 * (worker/jobs/admission.ts). The top-level limits apply to an account without a Marketplace plan; `plans`
 * gives a plan's own, by plan id or name, each key falling back to the top level. null: no limit.
 */
import { z } from "zod";

/** The default ceiling of a pull request's total cost, in runs at the per-run ceiling. */
export const PULL_REQUEST_COST_RUNS = 5;

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
    maxCostUsdPerPullRequest: z
      .number()
      .positive()
      .nullable()
      .optional()
      .describe(
        `Model cost of every run on one of the app's pull requests together (the run that opened it, then its review, CI and rebase rounds), in USD; once reached, no new round starts on it and the app says so once on the pull request. Unset: ${PULL_REQUEST_COST_RUNS} × \`agent.limits.maxCostUsd\`; null: no limit.`,
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

/** The operator's ceiling of a pull request's total cost in USD (null: none). */
export function pullRequestCostCeiling(config: {
  quotas: Pick<QuotasConfig, "maxCostUsdPerPullRequest">;
  agent: { limits: { maxCostUsd: number } };
}): number | null {
  const set = config.quotas.maxCostUsdPerPullRequest;
  return set === undefined ? PULL_REQUEST_COST_RUNS * config.agent.limits.maxCostUsd : set;
}
