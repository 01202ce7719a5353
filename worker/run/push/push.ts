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
import { commitAndPush } from "./commit-and-push.js";

export async function push(
  run: OpenRun,
  task: Task,
  checkout: Checkout,
  config: LoadedRepoConfig,
  tested: TestedChange,
  draft: PullRequestDraft,
  /** A rebase round's linear replay: the branch's commit it replaces, force-pushed over only while there. */
  replaces?: string,
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
    pushToken: () => run.credentials.token("push"),
    signal: run.signal,
    // A resolved merge is made on a commit that was never pushed: a later attempt could not make it again.
    keep:
      store &&
      (task.mergeFrom
        ? undefined
        : (unpushed) => store.save(run.keptKey, { run: run.name, draft, unpushed })),
    logger: run.log,
  });
  // The commit pushed: the app's check run goes on it.
  return { headSha: sha };
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
