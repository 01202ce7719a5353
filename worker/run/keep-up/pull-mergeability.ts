/**
 * What GitHub says of the app's pull request after its base moved (src/shared/queue/base-moves.ts):
 * conflicting (`mergeable_state: dirty`), not computed yet (`mergeable` is null until GitHub has: the look
 * is retried), or nothing to do (mergeable; closed, or no longer the app's on that base). Not compared with
 * the pull request's `base.sha`: GitHub updates it with the head, not when the base moves. Read with an
 * installation token of the repository's API permissions, revoked at once.
 */
import { fixBranch } from "../../../src/shared/fix-branch.js";
import { githubFailure } from "../../../src/shared/github/index.js";
import { ownFixIssue } from "../../../src/shared/github/own-pull.js";
import type { BaseMove } from "../../../src/shared/queue/base-moves.js";
import type { RunParts } from "../run-parts.js";

type Mergeability = "conflicting" | "pending" | "mergeable" | "gone";

export async function pullMergeability(
  parts: Pick<RunParts, "auth" | "identity">,
  move: BaseMove,
): Promise<Mergeability> {
  const credentials = parts.auth.forRun(move.installationId, move.repoId);
  try {
    const octokit = await credentials.octokit();
    const { data: pull } = await octokit.rest.pulls
      .get({ owner: move.owner, repo: move.repo, pull_number: move.pullNumber })
      .catch((error: unknown) => {
        throw githubFailure(error, `reading pull request #${move.pullNumber}`);
      });
    const ours =
      pull.head.ref === fixBranch(move.issueNumber) &&
      ownFixIssue(pull, `${move.owner}/${move.repo}`, parts.identity.name) === move.issueNumber;
    if (pull.state !== "open" || !ours || pull.base.ref !== move.base) return "gone";
    if (pull.mergeable === null) return "pending";
    return pull.mergeable_state === "dirty" ? "conflicting" : "mergeable";
  } finally {
    await credentials.revoke();
  }
}
