/**
 * The configured label added to an open issue starts a run, when whoever added it has write access to
 * the repository, as for `/agent-fix`. GitHub adds an issue template's labels in the issue author's
 * name, so on a public repository anyone could otherwise start paid runs; a triage user may label but
 * not command. Such a label gets one reply per issue saying who can start runs. Bots' labels count
 * only for bots the operator named (AGENT_FIX_LABEL_BOTS).
 */
import type { Context } from "probot";
import { hasWriteAccess } from "../../shared/github/permissions.js";
import { labelRefusedKey } from "../../shared/queue/keys.js";
import { fromBot, type HandlerDeps, type IssueTarget, targetOf } from "./deps.js";
import { startRun } from "./runs.js";

const REFUSAL_KEY_TTL_S = 90 * 24 * 60 * 60;

export async function onIssueLabeled(context: Context<"issues.labeled">, deps: HandlerDeps): Promise<void> {
  const { payload } = context;
  if (payload.label?.name !== deps.settings.label || payload.issue.state !== "open") return;
  const sender = payload.sender;
  const namedBot = fromBot(sender) && (deps.settings.labelBots ?? []).includes(sender.login);
  if (fromBot(sender) && !namedBot) return;
  const target = targetOf(payload, payload.issue.number);
  if (!target) return;
  const repo = { owner: target.owner, repo: target.repo };
  if (!namedBot && !(await hasWriteAccess(context.octokit, repo, sender.login))) {
    await refuseLabel(context, deps, target, sender.login);
    return;
  }
  await startRun(context, deps, target, sender.login, "label", () =>
    context.octokit.rest.reactions.createForIssue({
      ...repo,
      issue_number: target.issueNumber,
      content: "eyes",
    }),
  );
}

/** Marks that an issue got its refusal; the label added again (or redelivered) is not answered twice. */
function refusalKey(deps: HandlerDeps, target: IssueTarget): string {
  return labelRefusedKey(deps.queue, target.repoId, target.issueNumber);
}

async function refuseLabel(
  context: Context<"issues.labeled">,
  deps: HandlerDeps,
  target: IssueTarget,
  login: string,
): Promise<void> {
  context.log.info({ login, issue: target.issueNumber }, "agent-fix label without write access: ignored");
  const key = refusalKey(deps, target);
  const first = await deps.queue.redis.set(key, "1", "EX", REFUSAL_KEY_TTL_S, "NX");
  if (first !== "OK") return;
  const { label, command } = deps.settings;
  const body =
    `@${login} the \`${label}\` label starts agent-fix only when someone with write access to this repository adds it, ` +
    `so no run was started. A maintainer can start one by commenting \`${command}\` here.`;
  try {
    await context.octokit.rest.issues.createComment({
      owner: target.owner,
      repo: target.repo,
      issue_number: target.issueNumber,
      body,
    });
  } catch (error) {
    await deps.queue.redis.del(key); // not answered: a redelivery may answer
    throw error;
  }
}
