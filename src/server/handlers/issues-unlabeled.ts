/** The configured label removed cancels a queued or running run. */
import type { Context } from "probot";
import { fromBot, type HandlerDeps, targetOf } from "./deps.js";
import { cancelRun } from "./runs.js";

export async function onIssueUnlabeled(
  context: Context<"issues.unlabeled">,
  deps: HandlerDeps,
): Promise<void> {
  const { payload } = context;
  if (fromBot(payload.sender) || payload.label?.name !== deps.settings.label) return;
  const target = targetOf(payload, payload.issue.number);
  if (target) await cancelRun(context, deps, target, payload.sender.login, "label removed");
}
