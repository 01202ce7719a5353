/**
 * `/agent-fix` in an issue comment starts a run, `/agent-fix stop` cancels it; honoured only from
 * users with write access to the repository, others get a short reply saying who may. `/agent-fix help`
 * and `/agent-fix status` answer anyone who may read it (info-commands.ts). On the app's
 * own pull request, `/agent-fix` starts a review run (the lines after the command say what to change)
 * and `/agent-fix stop` cancels the issue's run; `/agent-fix rebase` there brings its branch up to date with
 * its base (worker/run/rebase-round.ts).
 */
import type { Context } from "probot";
import { hasReadAccess, hasWriteAccess } from "../../shared/github/permissions.js";
import { fromBot, type HandlerDeps, type IssueTarget, targetOf } from "./deps.js";
import { helpText, type InfoCommand, infoReplyAllowed, openPullOf, statusText } from "./info-commands.js";
import { fixIssueOf, startReviewRun } from "./pull-request-review.js";
import { startRebaseRun } from "./rebase-command.js";
import { cancelRun, startRun } from "./runs.js";

type CommentCommand = "start" | "stop" | "rebase" | InfoCommand | null;

const SUBCOMMANDS = new Set<string>(["stop", "rebase", "help", "status"]);

/** The command in a comment: its first non-empty line must be the command, optionally `stop`, `rebase`, `help` or `status`. */
export function parseCommand(body: string, command: string): CommentCommand {
  const line =
    body
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "";
  const words = line.split(/\s+/);
  if (words[0] !== command) return null;
  if (words.length === 1) return "start";
  if (words.length === 2 && SUBCOMMANDS.has(words[1] ?? "")) return words[1] as CommentCommand;
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
  if (command === "help" || command === "status") {
    await answerInfo(context, deps, target, command);
    return;
  }
  if (!(await hasWriteAccess(context.octokit, repo, login))) {
    await reply(
      `@${login} only people with write access to this repository can use \`${deps.settings.command}\` (start), \`${deps.settings.command} stop\` (cancel) and \`${deps.settings.command} rebase\` (bring its pull request up to date). Ask a maintainer.`,
    );
    return;
  }
  if (payload.issue.pull_request) {
    await onPullRequestCommand(context, deps, target, command);
    return;
  }
  if (command === "stop") {
    await cancelRun(context, deps, target, login, `${deps.settings.command} stop`);
    return;
  }
  if (command === "rebase") {
    await reply(
      `@${login} \`${deps.settings.command} rebase\` works on agent-fix's pull request: comment it there.`,
    );
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

/** The command in a comment on a pull request: only the app's own pull requests take it. */
async function onPullRequestCommand(
  context: Context<"issue_comment.created">,
  deps: HandlerDeps,
  pullTarget: IssueTarget,
  command: "start" | "stop" | "rebase",
): Promise<void> {
  const { payload } = context;
  const repo = { owner: pullTarget.owner, repo: pullTarget.repo };
  const pullNumber = pullTarget.issueNumber;
  const login = payload.sender.login;
  const { data: pull } = await context.octokit.rest.pulls.get({ ...repo, pull_number: pullNumber });
  const issueNumber = await fixIssueOf(pull, payload.repository.full_name, deps);
  if (issueNumber === null) {
    await context.octokit.rest.issues.createComment({
      ...repo,
      issue_number: pullNumber,
      body: `@${login} \`${deps.settings.command}\` works on issues and on agent-fix's own pull requests, not on this one.`,
    });
    return;
  }
  const target = { ...pullTarget, issueNumber };
  if (command === "stop") {
    await cancelRun(context, deps, target, login, `${deps.settings.command} stop`);
    return;
  }
  if (pull.state !== "open") return;
  if (command === "rebase") {
    await startRebaseRun(context, deps, target, login, { pullNumber, commentId: payload.comment.id });
    return;
  }
  await startReviewRun(context, deps, target, login, { pullNumber, commentId: payload.comment.id }, () =>
    context.octokit.rest.reactions.createForIssueComment({
      ...repo,
      comment_id: payload.comment.id,
      content: "eyes",
    }),
  );
}

/**
 * `help` or `status`, answered once to anyone who may read the repository; on agent-fix's pull request
 * `status` tells the run of the issue it fixes. Nothing is enqueued.
 */
async function answerInfo(
  context: Context<"issue_comment.created">,
  deps: HandlerDeps,
  target: IssueTarget,
  command: InfoCommand,
): Promise<void> {
  const { payload } = context;
  const login = payload.sender.login;
  const repo = { owner: target.owner, repo: target.repo };
  if (!(await hasReadAccess(context.octokit, repo, login))) return;
  if (!(await infoReplyAllowed(deps, target, login))) {
    context.log.info({ login, command }, "help/status not answered: too many this hour");
    return;
  }
  let about = target;
  let pullNumber: number | null = null;
  if (command === "status" && payload.issue.pull_request) {
    const { data: pull } = await context.octokit.rest.pulls.get({ ...repo, pull_number: target.issueNumber });
    const issueNumber = await fixIssueOf(pull, payload.repository.full_name, deps);
    if (issueNumber !== null) {
      about = { ...target, issueNumber };
      pullNumber = pull.number;
    }
  } else if (command === "status") {
    pullNumber = await openPullOf(context.octokit, target);
  }
  const text =
    command === "help" ? helpText(deps.settings) : await statusText(context, deps, about, pullNumber);
  await context.octokit.rest.issues.createComment({
    ...repo,
    issue_number: target.issueNumber,
    body: `@${login} ${text}`,
  });
}
