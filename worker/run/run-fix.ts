/**
 * The fix run, in the order it happens (the run was opened and its issue read by run-job.ts):
 *   1. check out the repository, and load its config through the contents API meanwhile; a rebase
 *      round's conflicting merge is started on the host, its conflicts the agent's task
 *   2. prepare: setup on the default branch's files, or the environment a run like it kept
 *   3. start the agent's sandbox, then the baseline (the tests before any change) alongside the agent
 *   4. solve: the agent works in its sandbox, and each submission is gated by the tests; the proof
 *      of a submission starts beside its gate, in a sandbox of its own
 *   5. prove: the new tests fail without the fix (the passing gate's proof, waited for), while
 *   6. the change the gate tested (committed beside its gate) is pushed
 *   7. the app's check run on the pushed commit, in progress
 *   8. publish: the draft pull request, the review request, the summary; the check run completed
 * A review round (review-round.ts) is this run with its own task. Every sandbox of the run is removed,
 * and its work dir deleted, when the run leaves this function: after the status says done.
 */
import { rm } from "node:fs/promises";
import type { RunOutcome } from "../run-end.js";
import { checkOut } from "./checkout/check-out.js";
import { noPullRequest } from "./end/no-pull-request.js";
import { startMerge } from "./merge/start-merge.js";
import type { OpenRun } from "./open/open-run.js";
import { progressIsBestEffort } from "./open/status-comment.js";
import { stepClock } from "./open/step-clock.js";
import { fixTask, type Issue, type Task } from "./open/task.js";
import { makeCheckoutRoot } from "./open/work-dirs.js";
import { prepare, runSandboxes, startAgentSandbox } from "./prepare/prepare.js";
import type { RunSandboxes } from "./prepare/run-sandboxes.js";
import { prove, proveTests } from "./prove/prove-tests.js";
import { startCheckRun } from "./publish/check-run.js";
import { pullRequestDraft } from "./publish/github-publisher.js";
import { publish } from "./publish/publish-pull-request.js";
import { commitAheadOf, push, pushTokenAhead } from "./push/push.js";
import { agentOfRun } from "./solve/agent-runner.js";
import { runGateSetup, type TestedChange } from "./solve/gate.js";
import { solve } from "./solve/solve.js";
import { startBaseline } from "./tests/start-baseline.js";

export async function runFix(
  run: OpenRun,
  issue: Issue,
  task: Task = fixTask(run, issue),
): Promise<RunOutcome> {
  const clock = stepClock();
  // Marked with this worker's id: the reaper removes it should the worker die mid-run.
  const workDir = await makeCheckoutRoot(run.parts.workRoot);
  let sandboxes: RunSandboxes | undefined;
  try {
    const cloned = await checkOut(run, task, workDir);
    const { checkout, ask, replaces } = await startMerge(run, task, cloned.checkout);
    const checkedOut = { ...cloned, checkout };
    const { trusted, config } = checkedOut;
    clock.lap("clone");
    sandboxes = runSandboxes(run, issue, trusted, config);
    const prepared = await prepare(run, issue, checkedOut, sandboxes, workDir);
    clock.lap("setup");
    const agentSandbox = await startAgentSandbox(run, sandboxes, prepared);
    clock.add(agentSandbox.timings);
    const baseline = startBaseline(run, task, config, sandboxes, prepared);
    const gate = runGateSetup(config, prepared, sandboxes, workDir, run.parts.intake, baseline.measuredMs);
    // Each submission's commit is made beside its gate too, off the checkout's files (push/commit.ts),
    // and the push token minted: the push step finds both ready.
    const commits = new Map<string, Promise<string>>();
    const pushToken = pushTokenAhead(run);
    const commitBeside = (change: TestedChange) => {
      pushToken().catch(() => {}); // the push awaits it, or mints again
      if (task.mergeFrom || replaces || commits.has(change.tree)) return;
      const made = commitAheadOf(run, task, checkout, config, change);
      made.catch(() => {}); // the push step awaits it, and commits anew when it failed
      commits.set(change.tree, made);
    };
    const solved = await solve({
      agent: agentOfRun(run.parts.agent, config, run),
      sandbox: agentSandbox.sandbox,
      gateSetup: gate,
      maxSteps: config.maxSteps,
      issue: ask,
      repoName: issue.repository.fullName,
      signal: run.signal,
      baseline,
      secrets: issue.setupSecrets,
      status: run.status,
      logger: run.log,
      proveAlongside: (change, signal) => {
        commitBeside(change);
        return proveTests(gate, change, config.testPaths, signal);
      },
    });
    clock.add(solved.timings);
    if (solved.kind !== "submitted")
      return await noPullRequest(run, issue, config, solved, baseline, clock.timings);
    const { trajectory } = solved;
    void run.status.progress("publishing").catch(progressIsBestEffort);
    // The change is pushed while its proof is waited for: the push needs only the commit the gate
    // tested, the proof goes into the pull request's body. A proof that fails ends the run once the push
    // settled, as a publish that fails does after it: the job's next attempt pushes over the branch.
    const proving = prove(gate, solved.tested, config.testPaths, run.signal, solved.proof);
    const drafted = proving.then(async ({ proof }) =>
      pullRequestDraft(issue, config.testCommand, { trajectory, baseline: await baseline.settled, proof }),
    );
    drafted.catch(() => {}); // awaited below; a push that fails keeps it for the next attempt (push.ts)
    const ahead = { commit: commits.get(solved.tested.tree), pushToken };
    const pushing = push(run, task, checkout, config, solved.tested, drafted, replaces, ahead);
    pushing.catch(() => {}); // awaited once the proof is in
    // The check run's client is minted while the change is pushed.
    const checksWriter = run.credentials.checksWriter();
    checksWriter.catch(() => {}); // startCheckRun reads its error (a refused permission) itself
    const proved = await proving.catch(async (error: unknown) => {
      await pushing.catch(() => {});
      throw error;
    });
    clock.add(proved.timings);
    const draft = await drafted;
    // What the publish reads and the push does not change is read while it pushes.
    task.publisher.readAhead?.(draft);
    const { headSha } = await pushing;
    const check = await startCheckRun(run, issue, headSha, draft, checksWriter);
    // What is left of the sandboxes (each gate's and proof's went with its tests) goes once the status
    // says done, in `finally`: removing it sooner took the CPU the push and the publish need.
    const pr = await publish(run, task.publisher, draft, check);
    clock.lap("publish");
    return { kind: "pull_request", number: pr.number, url: pr.url, trajectory, timings: clock.timings };
  } finally {
    await sandboxes?.disposeAll();
    await rm(workDir, { recursive: true, force: true });
  }
}
