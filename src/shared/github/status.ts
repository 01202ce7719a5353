/**
 * The one status comment on the issue, edited in place as the run moves on and always ending in a
 * final state: the pull request, the reason it stopped, or cancelled (by whom).
 */
import type { GitHubApi, RepoRef } from "./api.js";
import { type BaselineFailure, renderBaselineFailure } from "./baseline-failure.js";
import { GITHUB_COM_LINKS, type LinkPolicy } from "./inert-links.js";
import { type LeftWork, renderLeftWork } from "./left-work.js";
import { fitComment, GITHUB_BODY_LIMIT, githubLength } from "./limits.js";

/** Hidden marker that identifies the app's status comment among the issue's comments. */
export const STATUS_MARKER = "<!-- agent-fix:status -->";

const statusPhases = ["queued", "cloning", "setting_up", "agent", "testing", "publishing"] as const;
export type StatusPhase = (typeof statusPhases)[number];

const phaseLabels: Record<StatusPhase, string> = {
  queued: "Queued",
  cloning: "Cloning the repository",
  setting_up: "Setting up",
  // The tests before any change (the baseline) run alongside the agent, not as a step of their own.
  agent: "Working on a fix",
  testing: "Testing the change",
  publishing: "Opening the pull request",
};

export type StatusView =
  | { kind: "progress"; phase: StatusPhase; detail?: string; step?: number; maxSteps?: number }
  | {
      kind: "succeeded";
      pullRequest: { number: number; url: string };
      note?: string;
      /** A review run: it pushed a commit addressing the review to this (existing) pull request. */
      review?: boolean;
      /** A CI round: it pushed a commit for the failing checks to this (existing) pull request; no review is asked. */
      ci?: boolean;
      /**
       * A rebase round: what it did to this (existing) pull request, e.g. "merged `main` into pull request #3",
       * and whether the tests ran (a clean update runs none: the app only merged).
       */
      keptUp?: { done: string; tested: boolean };
      /** false: GitHub refused a draft in this repository, so it was opened ready for review. */
      draft?: boolean;
      /** false: the review request failed (its reason is among `problems`). */
      reviewRequested?: boolean;
      /** Whom review was requested from when not the person who started the run (the code owners). */
      reviewers?: string[];
      /** What did not work after the pull request was open (the summary, the review request...). */
      problems?: string[];
    }
  | {
      kind: "failed";
      reason: string;
      summary?: string;
      /** The change the agent left when it stopped on a limit, its tests' result and how to go on. */
      work?: LeftWork;
      /** The tests that failed before any change and stopped the run: their output, its class, the agent's spend. */
      baseline?: BaselineFailure;
    }
  | { kind: "cancelled"; by: string; reason?: string };

interface StatusContext {
  requestedBy: string;
  /** Link to the full trajectory (PUBLIC_URL), when served. */
  trajectoryUrl?: string;
  /** Where the run's settings came from when not (only) the repository's file, with the file that would change them. */
  configNote?: string;
  /** That the run builds on a branch holding people's commits, and how to start afresh instead. */
  startNote?: string;
  /** Hosts the model's text (the unfinished work) may link to; default github.com only. */
  links?: LinkPolicy;
}

export function renderStatus(view: StatusView, context: StatusContext): string {
  const lines = [STATUS_MARKER];
  switch (view.kind) {
    case "progress": {
      const current = statusPhases.indexOf(view.phase);
      lines.push(`**agent-fix** is working on this issue (requested by @${context.requestedBy}).`, "");
      statusPhases.forEach((phase, i) => {
        let label = phaseLabels[phase];
        if (phase === "agent" && view.phase === "agent" && view.step !== undefined) {
          label += `: step ${view.step}${view.maxSteps ? ` of at most ${view.maxSteps}` : ""}`;
        }
        const mark = i < current ? "- [x]" : "- [ ]";
        lines.push(`${mark} ${i === current ? `**${label}**` : label}${i === current ? " ⏳" : ""}`);
      });
      if (view.detail) lines.push("", view.detail);
      lines.push("", "Comment `/agent-fix stop` or remove the label to cancel.");
      break;
    }
    case "succeeded":
      lines.push(...succeededLines(view, context));
      break;
    case "failed":
      lines.push(...failedLines(view, context, lines.join("\n")));
      break;
    case "cancelled":
      lines.push(
        `🛑 **agent-fix** run cancelled by @${view.by.replace(/^@/, "")}${view.reason ? ` (${view.reason})` : ""}.`,
      );
      lines.push("", "Add the label again or comment `/agent-fix` to start a new run.");
      break;
  }
  if (context.startNote) lines.push("", context.startNote);
  if (context.configNote) lines.push("", context.configNote);
  if (context.trajectoryUrl && view.kind !== "progress")
    lines.push("", `[Full trajectory](${context.trajectoryUrl})`);
  return fitComment(lines.join("\n"));
}

/** Room kept for the separators and the trajectory link around the unfinished work. */
const LINK_ROOM = 1_000;

function failedLines(
  view: Extract<StatusView, { kind: "failed" }>,
  context: StatusContext,
  before: string,
): string[] {
  const lines = [`❌ **agent-fix** stopped without a pull request.`, "", `**Why:** ${view.reason}`];
  if (view.baseline) lines.push("", renderBaselineFailure(view.baseline));
  const summary = view.summary ? ["", view.summary] : [];
  if (!view.work) return [...lines, ...summary];
  // The unfinished work gets the room the rest of the comment leaves (the summary is rendered smaller).
  const rest = githubLength([before, ...lines, ...summary, context.trajectoryUrl ?? ""].join("\n"));
  const work = renderLeftWork(
    view.work,
    GITHUB_BODY_LIMIT - rest - LINK_ROOM,
    context.links ?? GITHUB_COM_LINKS,
  );
  return [...lines, "", work, ...summary];
}

/** `@a`, `@a and @b`, `@a, @b and @c`: GitHub notifies them of the request, so the mentions may stay. */
function reviewersLine(reviewers: readonly string[]): string {
  return reviewers.length < 2
    ? (reviewers[0] ?? "")
    : `${reviewers.slice(0, -1).join(", ")} and ${reviewers.at(-1)}`;
}

function succeededLines(view: Extract<StatusView, { kind: "succeeded" }>, context: StatusContext): string[] {
  const { number, url } = view.pullRequest;
  if (view.keptUp) {
    const { done, tested } = view.keptUp;
    return [
      `✅ **agent-fix** ${done}: ${url}`,
      ...(tested ? ["", "The repository's tests pass on the result."] : []),
      ...(view.note ? ["", view.note] : []),
    ];
  }
  const lines = [
    view.ci
      ? `✅ **agent-fix** pushed a commit for the failing checks to pull request #${number}: ${url}`
      : view.review
        ? `✅ **agent-fix** pushed a commit addressing the review to pull request #${number}: ${url}`
        : view.draft === false
          ? `✅ **agent-fix** opened pull request #${number}: ${url}`
          : `✅ **agent-fix** opened draft pull request #${number}: ${url}`,
    "",
    `The repository's tests pass on the change.${view.reviewRequested === false || view.ci ? "" : ` Review requested from ${reviewersLine(view.reviewers ?? [`@${context.requestedBy}`])}.`}`,
  ];
  if (view.draft === false && !view.review && !view.ci) {
    lines.push(
      "",
      "It is not a draft: GitHub does not support draft pull requests in this repository (private repositories on GitHub Free and Pro plans).",
    );
  }
  if (view.problems?.length) {
    lines.push("", "⚠️ **What did not work:**", ...view.problems.map((problem) => `- ${problem}`));
  }
  if (view.note) lines.push("", view.note);
  return lines;
}

interface IssueRef extends RepoRef {
  issueNumber: number;
}

/** Posts the status comment and returns its id (stored in the job so it can be edited in place). */
export async function createStatusComment(
  api: GitHubApi,
  issue: IssueRef,
  view: StatusView,
  context: StatusContext,
): Promise<number> {
  const { data } = await api.rest.issues.createComment({
    owner: issue.owner,
    repo: issue.repo,
    issue_number: issue.issueNumber,
    body: renderStatus(view, context),
  });
  return data.id;
}

export async function updateStatusComment(
  api: GitHubApi,
  repo: RepoRef,
  commentId: number,
  view: StatusView,
  context: StatusContext,
): Promise<void> {
  await api.rest.issues.updateComment({ ...repo, comment_id: commentId, body: renderStatus(view, context) });
}
