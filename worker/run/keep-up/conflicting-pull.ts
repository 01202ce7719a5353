/**
 * Whether the app's pull request conflicts with its base once a run has pushed to it, asked only when the
 * operator wants conflicts resolved by themselves (`worker.keepUp.whenConflicting`). The answer goes up in
 * the job's result; the job's end (worker/jobs/job-ends.ts) queues the rebase round.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { RunOutcome } from "../../run-end.js";
import type { OpenRun } from "../open/open-run.js";

/** GitHub computes mergeability after a push: `mergeable` is null until it has. */
const READS = 4;
const WAIT_MS = 1_000;

/** The pull request's number when GitHub reports it conflicting (`mergeable_state: dirty`); else undefined. */
export async function conflictingPull(run: OpenRun, outcome: RunOutcome): Promise<number | undefined> {
  if (!run.parts.agent.operator.worker.keepUp.whenConflicting) return undefined;
  // A rebase round's own result is never chased again: a conflict it left is for a person.
  if (outcome.kind !== "pull_request" || run.job.data.trigger === "rebase") return undefined;
  const { owner, repo } = run.job.data;
  try {
    for (let read = 1; read <= READS; read++) {
      const { data: pull } = await run.octokit.rest.pulls.get({ owner, repo, pull_number: outcome.number });
      if (pull.state !== "open") return undefined;
      if (pull.mergeable_state === "dirty") return pull.number;
      if (pull.mergeable !== null) return undefined;
      if (read < READS) await sleep(WAIT_MS * read, undefined, { signal: run.signal });
    }
  } catch (err) {
    // The run is done and its status final: not knowing only means no round by itself.
    run.log.warn({ err }, "could not read whether the pull request conflicts with its base");
  }
  return undefined;
}
