/**
 * `/agent-fix rebase` on the app's own pull request (from someone with write access): a rebase round
 * brings its branch up to date with its base (worker/run/rebase-round.ts). It shares the issue's job id,
 * so it never runs beside another run of the issue; one asked while such a run is queued or running is
 * declined with a reply, to be asked again.
 */
import type { EventContext, HandlerDeps, IssueTarget } from "./deps.js";
import { startRun } from "./runs.js";

export async function startRebaseRun(
  context: EventContext,
  deps: HandlerDeps,
  target: IssueTarget,
  login: string,
  ids: { pullNumber: number; commentId: number },
): Promise<void> {
  const repo = { owner: target.owner, repo: target.repo };
  const result = await startRun(
    context,
    deps,
    target,
    login,
    "rebase",
    () =>
      context.octokit.rest.reactions.createForIssueComment({
        ...repo,
        comment_id: ids.commentId,
        content: "eyes",
      }),
    ids,
  );
  if (result.status !== "duplicate") return;
  await context.octokit.rest.issues.createComment({
    ...repo,
    issue_number: ids.pullNumber,
    body: `@${login} an agent-fix run for #${target.issueNumber} is queued or running, so the branch was not brought up to date. Comment \`${deps.settings.command} rebase\` again once it has finished.`,
  });
}
