/** Closing the issue cancels a queued or running run (by whoever closed it, bots included). */
import type { Context } from "probot";
import { type HandlerDeps, targetOf } from "./deps.js";
import { cancelRun } from "./runs.js";

export async function onIssueClosed(context: Context<"issues.closed">, deps: HandlerDeps): Promise<void> {
  const { payload } = context;
  const target = targetOf(payload, payload.issue.number);
  if (target) await cancelRun(context, deps, target, payload.sender.login, "issue closed");
}
