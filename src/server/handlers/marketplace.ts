/**
 * `marketplace_purchase` events set the account's plan, whose limits the worker applies
 * (worker/jobs/admission-limits.ts; the operator maps plans to limits in the `quotas:` config). A purchase
 * or a change takes effect now (GitHub sends `changed` again when a pending change takes effect); a
 * cancellation drops the plan, so the operator's default limits apply; a pending change (a downgrade
 * or a cancellation at the end of the billing cycle) changes nothing yet.
 */
import type { Context } from "probot";
import { clearAccountPlan, setAccountPlan } from "../../shared/queue/plans.js";
import type { HandlerDeps } from "./deps.js";

export async function onMarketplacePurchase(
  context: Context<"marketplace_purchase">,
  deps: Pick<HandlerDeps, "queue">,
): Promise<void> {
  const { payload } = context;
  const { account, plan } = payload.marketplace_purchase;
  const { redis } = deps.queue;
  const log = { action: payload.action, account: account.login, plan: plan.name };
  switch (payload.action) {
    case "purchased":
    case "changed":
      await setAccountPlan(redis, deps.queue, account.id, {
        id: plan.id,
        name: plan.name,
        accountLogin: account.login,
        since: payload.effective_date,
      });
      context.log.info(log, "marketplace plan set");
      return;
    case "cancelled":
      await clearAccountPlan(redis, deps.queue, account.id);
      context.log.info(log, "marketplace plan cancelled: default limits apply");
      return;
    default:
      context.log.info({ ...log, effective: payload.effective_date }, "marketplace plan change pending");
  }
}
