/**
 * `/agent-fix` in an issue comment starts a run, `/agent-fix stop` cancels it; honoured only from
 * users with write access to the repository, others get a short reply saying who may.
 */
import type { Context } from "probot";
import { hasWriteAccess } from "../github/permissions.js";
import { fromBot, type HandlerDeps, targetOf } from "./deps.js";
import { cancelRun, startRun } from "./runs.js";

export type CommentCommand = "start" | "stop" | null;

/** The command in a comment: its first non-empty line must be the command, optionally `stop`. */
export function parseCommand(body: string, command: string): CommentCommand {
  const line =
    body
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "";
  const words = line.split(/\s+/);
  if (words[0] !== command) return null;
  if (words.length === 1) return "start";
  if (words.length === 2 && words[1] === "stop") return "stop";
  return null;
}

export async function onIssueCommentCreated(
  context: Context<"issue_comment.created">,
  deps: HandlerDeps,
): Promise<void> {
  const { payload } = context;
  if (fromBot(payload.sender)) return;
  const command = parseCommand(payload.comment.body, deps.settings.command);
  if (!command) return;
  const target = targetOf(payload, payload.issue.number);
  if (!target) return;
  const repo = { owner: target.owner, repo: target.repo };
  const login = payload.sender.login;
  const reply = (body: string) =>
    context.octokit.rest.issues.createComment({ ...repo, issue_number: target.issueNumber, body });
  if (!(await hasWriteAccess(context.octokit, repo, login))) {
    await reply(
      `@${login} only people with write access to this repository can use \`${deps.settings.command}\` (start) and \`${deps.settings.command} stop\` (cancel). Ask a maintainer, or add the \`${deps.settings.label}\` label if you can.`,
    );
    return;
  }
  if (command === "stop") {
    await cancelRun(context, deps, target, login, `${deps.settings.command} stop`);
    return;
  }
  if (payload.issue.pull_request) {
    await reply(`@${login} \`${deps.settings.command}\` works on issues, not on pull requests.`);
    return;
  }
  if (payload.issue.state !== "open") {
    await reply(`@${login} this issue is closed; reopen it to start agent-fix.`);
    return;
  }
  await startRun(context, deps, target, login, "comment", () =>
    context.octokit.rest.reactions.createForIssueComment({
      ...repo,
      comment_id: payload.comment.id,
      content: "eyes",
    }),
  );
}
