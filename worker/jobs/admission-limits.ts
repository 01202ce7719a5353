/**
 * The limits that apply to a run (its account's Marketplace plan over the operator's defaults) and
 * the words a maintainer reads when one of them holds the run back: which limit, and when it resets.
 */
import type { Redis } from "ioredis";
import type { QueueNames } from "../../src/shared/queue/index.js";
import type { AccountPlan } from "../../src/shared/queue/plans.js";
import { readAccountPlan } from "../../src/shared/queue/plans.js";
import type { QuotaLimits, QuotasConfig } from "../config/quotas.js";

export interface AppliedLimits extends QuotaLimits {
  /** The plan they come from, or null for the operator's defaults. */
  plan: AccountPlan | null;
}

/** A plan's own limits by id, else by name, each falling back to the defaults. */
function limitsOf(quotas: QuotasConfig, plan: AccountPlan | null): AppliedLimits {
  const own = plan ? (quotas.plans[String(plan.id)] ?? quotas.plans[plan.name] ?? {}) : {};
  return {
    runsAtOnce: own.runsAtOnce ?? quotas.runsAtOnce,
    monthlyBudgetUsd: own.monthlyBudgetUsd === undefined ? quotas.monthlyBudgetUsd : own.monthlyBudgetUsd,
    runsPerDayPerRepository:
      own.runsPerDayPerRepository === undefined
        ? quotas.runsPerDayPerRepository
        : own.runsPerDayPerRepository,
    plan,
  };
}

/** The limits of the account a job's repository belongs to (no account id: the defaults). */
export async function limitsFor(
  redis: Pick<Redis, "get">,
  names: QueueNames,
  quotas: QuotasConfig,
  accountId: number | undefined,
): Promise<AppliedLimits> {
  const plan = accountId ? await readAccountPlan(redis, names, accountId) : null;
  return limitsOf(quotas, plan);
}

/** The limit that holds a run back. */
export type HeldBy =
  | { limit: "runsAtOnce"; value: number }
  | { limit: "monthlyBudgetUsd"; value: number; spent: number; resetsAt: Date }
  | { limit: "runsPerDayPerRepository"; value: number; resetsAt: Date };

function planWords(plan: AccountPlan | null): string {
  return plan ? `the ${plan.name} plan` : "the default plan";
}

function utc(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** What the status comment says; `repo` is `owner/name`. */
export function heldByText(held: HeldBy, plan: AccountPlan | null, repo: string): string {
  const under = planWords(plan);
  switch (held.limit) {
    case "runsAtOnce":
      return `Waiting for a free slot: this installation may run ${held.value} run(s) at once under ${under}, and that many are running. This run starts as soon as one of them ends.`;
    case "monthlyBudgetUsd":
      return `Not started: this installation's monthly budget of $${held.value.toFixed(2)} under ${under} is spent ($${held.spent.toFixed(2)} this month). It resets on ${utc(held.resetsAt)}; label the issue again after that, or ask the app's operator for a larger plan.`;
    case "runsPerDayPerRepository":
      return `Not started: ${repo} has started its ${held.value} run(s) for today under ${under}. The count resets at ${utc(held.resetsAt)}; label the issue again after that.`;
  }
}
