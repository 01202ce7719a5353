/**
 * The ceiling of a pull request's total cost. Each run is held to its own cost ceiling, but review, CI
 * and rebase rounds on the same pull request add up: once every run on it together has cost the
 * operator's `quotas.maxCostUsdPerPullRequest` (src/shared/queue/pull-costs.ts counts it), a round
 * ends before any clone, sandbox or model call, the app says so once on the pull request with the
 * figures and how to raise it, and the status comment says why nothing ran.
 */
import { pullRequestCostCeiling } from "../../config/quotas.js";
import type { RunOutcome } from "../../run-end.js";
import type { OpenRun } from "./open-run.js";

/** Marks the app's comment that the ceiling is reached (said once per pull request). */
export const PULL_COST_MARK = "<!-- agent-fix:pull-cost-ceiling -->";

/** What kind of round is refused, as the comment names it. */
type Round = "review" | "CI" | "rebase";

/** Dollars as the texts show them: cents, or tenths of a cent under a dollar. */
function usd(amount: number): string {
  return `$${amount.toFixed(amount < 1 ? 4 : 2)}`;
}

/**
 * null when the round may run; otherwise the round's end, after the pull request was told (once) and
 * the status comment says why. A total that cannot be read lets the round run (and is logged): the
 * round is still held to the run's own cost ceiling.
 */
export async function pullCostRefusal(
  run: OpenRun,
  pullNumber: number,
  round: Round,
): Promise<RunOutcome | null> {
  const costs = run.parts.pullCosts;
  const ceiling = pullRequestCostCeiling(run.parts.agent.operator);
  if (!costs || ceiling === null) return null;
  const { owner, repo, repoId } = run.job.data;
  const total = await costs.total(repoId, pullNumber).catch((err: unknown) => {
    run.log.warn({ err }, "the pull request's total cost could not be read: the round runs");
    return null;
  });
  if (total === null || total < ceiling) return null;
  const figures = `Every agent-fix run on pull request #${pullNumber} together has cost ${usd(total)} in model calls, which reaches the ceiling of ${usd(ceiling)} per pull request (\`quotas.maxCostUsdPerPullRequest\` in the operator's config)`;
  if (await costs.sayCeilingOnce(repoId, pullNumber)) {
    await run.octokit.rest.issues.createComment({
      owner,
      repo,
      issue_number: pullNumber,
      body: [
        PULL_COST_MARK,
        `${figures}, so agent-fix starts no more review, CI or rebase rounds here.`,
        "",
        "Someone has to take the pull request from here. To let agent-fix go on, an operator of its deployment can raise `quotas.maxCostUsdPerPullRequest` (or set it to `null` for no ceiling) and restart its workers; the next review or `/agent-fix` request then starts a round.",
      ].join("\n"),
    });
  }
  const reason = `${figures}: this ${round} round did not run.`;
  run.log.info({ total, ceiling, pullNumber }, "the pull request's cost ceiling is reached: round refused");
  await run.status.failed(reason);
  return { kind: "no_pull_request", reason, trajectory: null, timings: {} };
}
