/**
 * The tested change as a commit on the host checkout, pushed to the issue's branch (a force-push for a fix
 * run, a new commit on top for a review round). Setup's secrets never leave in a change, however the agent
 * came by them. A push a later attempt may get through keeps what makes the same commit again. Returns
 * the commit pushed.
 */
import { AgentFixError } from "../../../src/shared/errors.js";
import type { Checkout } from "../checkout/clone.js";
import type { LoadedRepoConfig } from "../configure/repo-config.js";
import type { OpenRun } from "../open/open-run.js";
import type { Task } from "../open/task.js";
import { secretsIn } from "../prepare/secret-scan.js";
import type { PullRequestDraft } from "../publish/github-publisher.js";
import type { TestedChange } from "../solve/gate.js";
import { commitAhead } from "./commit.js";
import { commitAndPush } from "./commit-and-push.js";

export async function push(
  run: OpenRun,
  task: Task,
  checkout: Checkout,
  config: LoadedRepoConfig,
  tested: TestedChange,
  /** For the job's next attempt, should the push fail in a way it may get through: kept once known. */
  draft: Promise<PullRequestDraft>,
  /** A rebase round's linear replay: the branch's commit it replaces, force-pushed over only while there. */
  replaces?: string,
  /** What was made beside the gate: the change's commit (commitAheadOf), the push token (pushTokenAhead). */
  ahead: { commit?: Promise<string> | undefined; pushToken?: () => Promise<string> } = {},
): Promise<{ headSha: string }> {
  refuseSecretsInChange(tested.patch, task.issue.setupSecrets);
  const store = run.parts.pendingPublishes;
  const { sha } = await commitAndPush({
    dir: checkout.dir,
    change: {
      baseBranch: checkout.branch,
      baseSha: checkout.headSha,
      patch: tested.patch,
      tree: tested.tree,
      commitTitle: task.commitTitle,
      forbiddenPaths: config.forbiddenPaths,
      force: !task.existingBranch,
      ...(task.mergeFrom ? { mergeCommit: true } : {}),
      ...(replaces ? { lease: replaces } : {}),
    },
    identity: run.parts.identity,
    links: run.parts.links,
    issueNumber: task.issue.number,
    pushToken: ahead.pushToken ?? (() => run.credentials.token("push")),
    signal: run.signal,
    // A resolved merge is made on a commit that was never pushed: a later attempt could not make it again.
    keep:
      store &&
      (task.mergeFrom
        ? undefined
        : async (unpushed) => store.save(run.keptKey, { run: run.name, draft: await draft, unpushed })),
    logger: run.log,
    ahead: ahead.commit,
  });
  // The commit pushed: the app's check run goes on it.
  return { headSha: sha };
}

/**
 * The tested change's commit made ahead, of its tested tree, off the checkout's files, index and HEAD
 * (commit.ts commitAhead): started beside each gate, so the push step finds it ready and pushes it as it is. Not
 * for a round that resolves a merge or replays linearly: those commit on the checkout's HEAD.
 */
export function commitAheadOf(
  run: OpenRun,
  task: Task,
  checkout: Checkout,
  config: LoadedRepoConfig,
  tested: TestedChange,
): Promise<string> {
  return commitAhead({
    dir: checkout.dir,
    tree: tested.tree,
    baseSha: checkout.headSha,
    identity: run.parts.identity,
    links: run.parts.links,
    issueNumber: task.issue.number,
    issueTitle: task.commitTitle,
    forbiddenPaths: config.forbiddenPaths,
  });
}

/** How long a push token minted ahead is used: half the hour GitHub's installation tokens last. */
const PUSH_TOKEN_FRESH_MS = 30 * 60_000;

/**
 * The run's push token, minted ahead (beside each gate, with its commit) so the push finds it ready
 * rather than asking GitHub on the run's path; minted again once older than PUSH_TOKEN_FRESH_MS, or
 * when minting failed. It stays on the host, and is revoked with the run's other tokens.
 */
export function pushTokenAhead(run: Pick<OpenRun, "credentials">): () => Promise<string> {
  let held: { at: number; token: Promise<string> } | null = null;
  return () => {
    if (!held || Date.now() - held.at > PUSH_TOKEN_FRESH_MS) {
      const token = run.credentials.token("push");
      const minted = { at: Date.now(), token };
      token.catch(() => {
        if (held === minted) held = null; // the push mints again, and reports its own failure
      });
      held = minted;
    }
    return held.token;
  };
}

function refuseSecretsInChange(patch: string, secrets: Record<string, string>): void {
  const names = secretsIn(patch, secrets);
  if (names.length === 0) return;
  throw new AgentFixError(`The change holds the value of the setup secret(s) ${names.join(", ")}`, {
    code: "secret_in_change",
    fault: "model",
    hint: "Nothing was pushed.",
  });
}
