/**
 * What a rebase round says: the reply on the pull request to whoever asked, the status's account, and
 * the publisher of a conflict round (the pull request reused, never a second one opened).
 */
import type { Trajectory } from "../../../src/shared/contracts.js";
import type { GitHubApi } from "../../../src/shared/github/index.js";
import { GITHUB_COM_LINKS, type LinkPolicy } from "../../../src/shared/github/inert-links.js";
import type { FixJobData } from "../../../src/shared/queue/index.js";
import { quotedDescription } from "../../github/quoted-description.js";
import type { KeptUp } from "../open/status-comment.js";
import { type Publisher, type PublisherOptions, roundPublisher } from "../publish/github-publisher.js";
import type { PullToUpdate } from "./pull-to-update.js";
import type { BranchUpdate } from "./update-branch.js";

/**
 * Whom a reply is for: the person who asked (`/agent-fix rebase`, or the run that left the pull request
 * conflicting), or nobody when the app started the round itself after the base moved (its own login is
 * the job's `requestedBy`): then the reply says why it came.
 */
interface Addressee {
  login: string;
  appLogin: string;
}

function addressed(to: Addressee, base: string, text: string): string {
  return to.login === to.appLogin
    ? `\`${base}\` moved and GitHub reported this pull request conflicting with it. ${text}`
    : `@${to.login} ${text}`;
}

/** A clean update's reply (no agent ran). */
export function keptUpReply(
  to: Addressee,
  pull: PullToUpdate,
  update: Exclude<BranchUpdate, { kind: "conflict" }>,
) {
  const sha = (s: string) => s.slice(0, 7);
  const done =
    update.kind === "current"
      ? `\`${pull.branch}\` is already up to date with \`${pull.base}\`: nothing to do.`
      : update.kind === "merged"
        ? `I merged \`${pull.base}\` into \`${pull.branch}\` (${sha(update.sha)}). It merged cleanly, so the agent was not run.`
        : `I rebased \`${pull.branch}\` onto \`${pull.base}\` (${sha(update.sha)}) and force-pushed it: every commit on it was agent-fix's.`;
  return [addressed(to, pull.base, done), ...(update.note ? ["", update.note] : [])].join("\n");
}

/** The status's account of a clean update. */
export function keptUpStatus(
  pull: PullToUpdate,
  update: Exclude<BranchUpdate, { kind: "conflict" }>,
): KeptUp {
  const done =
    update.kind === "current"
      ? `found pull request #${pull.number} already up to date with \`${pull.base}\``
      : update.kind === "merged"
        ? `merged \`${pull.base}\` into pull request #${pull.number}`
        : `rebased pull request #${pull.number} onto \`${pull.base}\``;
  return { done, tested: false };
}

/**
 * The publisher of a conflict round: the pull request is only looked up, the requester's review asked
 * again, and beside the trajectory summary a reply says what was merged and how the conflicts went.
 */
export function keepUpPublisher(
  api: GitHubApi,
  job: FixJobData,
  round: {
    pull: PullToUpdate;
    note: string | undefined;
    /** The branch's change replayed on the base (a rebase), not a merge commit. */
    linear: boolean;
    appLogin: string;
    options?: PublisherOptions;
  },
): Publisher {
  const { pull, note, appLogin, options = {} } = round;
  const links = options.links ?? GITHUB_COM_LINKS;
  const to = { login: job.requestedBy, appLogin };
  return roundPublisher(api, job, options, {
    pull: async () => ({ number: pull.number, url: pull.url }),
    reply: (draft) => resolvedReply(to, pull, { note, linear: round.linear }, draft.trajectory, links),
    // Nobody asked for a round the app started itself: no review is requested of anyone.
    ...(job.requestedBy === appLogin ? { requestReview: async () => ({ owners: [], problems: [] }) } : {}),
  });
}

function resolvedReply(
  to: Addressee,
  pull: PullToUpdate,
  how: { note: string | undefined; linear: boolean },
  trajectory: Trajectory,
  links: LinkPolicy,
): string {
  const done = how.linear
    ? `I rebased \`${pull.branch}\` onto \`${pull.base}\` and force-pushed it: every commit on it was agent-fix's. It conflicted: the agent resolved the conflicts with the branch's change replayed as one commit on \`${pull.base}\`, and the repository's tests pass on it.`
    : `I merged \`${pull.base}\` into \`${pull.branch}\`. It conflicted: the agent resolved the conflicts, and the repository's tests pass on the merge commit.`;
  return [
    addressed(to, pull.base, done),
    ...(how.note ? ["", how.note] : []),
    ...quotedDescription(trajectory, links),
  ].join("\n");
}
