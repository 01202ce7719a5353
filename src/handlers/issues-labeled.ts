/** The configured label added to an open issue starts a run. */
import type { Context } from "probot";
import { fromBot, type HandlerDeps, targetOf } from "./deps.js";
import { startRun } from "./runs.js";

export async function onIssueLabeled(context: Context<"issues.labeled">, deps: HandlerDeps): Promise<void> {
  const { payload } = context;
  if (
    fromBot(payload.sender) ||
    payload.label?.name !== deps.settings.label ||
    payload.issue.state !== "open"
  )
    return;
  const target = targetOf(payload, payload.issue.number);
  if (!target) return;
  await startRun(context, deps, target, payload.sender.login, "label", () =>
    context.octokit.rest.reactions.createForIssue({
      owner: target.owner,
      repo: target.repo,
      issue_number: target.issueNumber,
      content: "eyes",
    }),
  );
}
