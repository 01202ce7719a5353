import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Trajectory } from "../../src/contracts.js";
import { AgentFixError } from "../../src/errors.js";
import { fixBranch } from "../../src/fix-branch.js";
import { runAgentPhase } from "./agent-phase.js";
import { runBaseline, type TestRun } from "./baseline.js";
import { cloneRepository } from "./checkout.js";
import { makeCheckoutRoot } from "./checkout-dirs.js";
import type { TestedChange, TestProof } from "./gate.js";
import { prepareTree } from "./prepare.js";
import { publishPullRequest } from "./publish-step.js";
import { commitAndPush } from "./push-step.js";
import { RunSandboxes } from "./sandbox.js";
import { secretsIn } from "./secret-scan.js";
import type { PipelineRepoConfig, PullRequestDraft, RunInput, RunOutcome, RunTimings } from "./types.js";
import { progressIsBestEffort } from "./types.js";

/**
 * Steps 3 to 12 of docs/architecture.md for one fix job, in order. Errors propagate (the processor maps
 * them to retry or not and finalises the status comment); an outcome without a pull request is reported
 * here.
 */
export async function runFix<C extends PipelineRepoConfig>(input: RunInput<C>): Promise<RunOutcome> {
  const { signal, status } = input;
  const timings: RunTimings = {};
  let mark = Date.now();
  /** Adds the time since the last lap to `step`. */
  const lap = (step: keyof RunTimings) => {
    const now = Date.now();
    timings[step] = (timings[step] ?? 0) + (now - mark);
    mark = now;
  };
  let disposal: Promise<void> | undefined;
  // Marked with this worker's id: the reaper removes it should the worker die mid-run.
  const root = await makeCheckoutRoot(input.workRoot);
  try {
    void status.progress("cloning").catch(progressIsBestEffort);
    const checkout = await cloneRepository({
      cloneUrl: input.repository.cloneUrl,
      token: await input.token("clone"),
      dir: join(root, "repo"),
      branch: input.existingBranch ?? input.repository.defaultBranch,
      signal,
    });
    const config = await input.loadConfig(checkout.dir);
    if (config.configNote) status.configured(config.configNote);
    lap("clone");

    void status.progress("setting_up").catch(progressIsBestEffort);
    const sandboxes = new RunSandboxes(input.sandboxes, {
      jobId: input.jobId,
      ...(config.limits ? { limits: config.limits } : {}),
      ...(config.image ? { image: config.image } : {}),
      ...(config.imageBuild
        ? {
            imageBuild: {
              root: checkout.dir,
              context: config.imageBuild.context,
              dockerfile: config.imageBuild.dockerfile,
              bases: config.imageBuild.bases,
              name: input.repository.fullName,
            },
          }
        : {}),
    });
    const onAbort = () => void sandboxes.disposeAll();
    signal.addEventListener("abort", onAbort, { once: true });
    let trajectory: Trajectory;
    let baseline: TestRun;
    let proof: TestProof;
    let tested: TestedChange;
    const test = { command: config.testCommand, timeoutMs: config.testTimeoutMs };
    try {
      const prepared = await prepareTree({
        sandboxes,
        checkoutDir: checkout.dir,
        headSha: checkout.headSha,
        root,
        setup: {
          commands: config.setup,
          network: config.setupNetwork && config.setup.length > 0,
          timeoutMs: config.setupTimeoutMs,
        },
        secrets: input.setupSecrets,
        signal,
      });
      lap("setup");
      void status.progress("baseline").catch(progressIsBestEffort);
      // The agent's sandbox starts while the baseline runs in a sandbox of its own.
      const agentSandbox = sandboxes.start(prepared.dir);
      // Awaited after the baseline, which throws its error; this only keeps it from being unhandled meanwhile.
      agentSandbox.catch(() => {});
      baseline = await sandboxes.using(prepared.dir, (sandbox) => runBaseline(sandbox, test, signal));
      const sandbox = await agentSandbox;
      // Both sandboxes started side by side: only the test run itself is the tests' time.
      lap("sandbox");
      timings.sandbox = (timings.sandbox ?? 0) - baseline.durationMs;
      timings.tests = (timings.tests ?? 0) + baseline.durationMs;
      if (!baseline.passed && !config.openPrWhenBaselineFails) {
        const reason =
          `The tests already fail on ${input.existingBranch ?? input.repository.defaultBranch} before any change ` +
          `(\`${config.testCommand}\` exited ${baseline.exitCode}), so a passing run could not be told apart. ` +
          "Fix the tests, or set `openPullRequestWhenBaselineFails: true` in .github/agent-fix.yml.";
        await status.failed(reason);
        return { kind: "no_pull_request", reason, trajectory: null, timings };
      }
      const outcome = await runAgentPhase({
        sandbox,
        gateSetup: { prepared, sandboxes, test, scratch: join(root, "scratch") },
        config,
        input: { ...input, agentFor: () => input.agentFor(config) },
        timings,
        lap,
        onAgentDone: () => {
          // Removed while the proof runs and the change is published; awaited before the status says done.
          disposal = sandboxes.dispose(sandbox);
        },
      });
      if (outcome.kind === "no_pull_request") return { ...outcome, timings };
      ({ trajectory, tested, proof } = outcome);
    } finally {
      signal.removeEventListener("abort", onAbort);
      const agentDisposal = disposal;
      disposal = sandboxes.disposeAll().then(() => agentDisposal);
    }

    void status.progress("publishing").catch(progressIsBestEffort);
    refuseSecretsInChange(tested.patch, input.setupSecrets);
    const keepUnpushed = input.keepUnpushed;
    const draft: PullRequestDraft = {
      issueNumber: input.issue.number,
      testCommand: config.testCommand,
      branch: fixBranch(input.issue.number),
      base: input.repository.defaultBranch,
      title: input.issue.title,
      trajectory,
      baseline,
      proof,
    };
    await commitAndPush({
      dir: checkout.dir,
      change: {
        baseBranch: checkout.branch,
        baseSha: checkout.headSha,
        patch: tested.patch,
        tree: tested.tree,
        commitTitle: input.commitTitle ?? input.issue.title,
        forbiddenPaths: config.forbiddenPaths,
        force: !input.existingBranch,
      },
      identity: input.identity,
      issueNumber: input.issue.number,
      pushToken: () => input.token("push"),
      signal,
      keep: keepUnpushed ? (change) => keepUnpushed(draft, change) : undefined,
    });
    const pr = await publishPullRequest({
      publisher: input.publisher,
      status,
      draft,
      requestedBy: input.requestedBy,
      alongside: disposal,
      logger: input.logger,
    });
    lap("publish");
    return { kind: "pull_request", number: pr.number, url: pr.url, trajectory, timings };
  } finally {
    await disposal;
    await rm(root, { recursive: true, force: true });
  }
}

/** Setup's secrets never leave in a change, however the agent came by them. */
function refuseSecretsInChange(patch: string, secrets: Record<string, string>): void {
  const names = secretsIn(patch, secrets);
  if (names.length === 0) return;
  throw new AgentFixError(`The change holds the value of the setup secret(s) ${names.join(", ")}`, {
    code: "secret_in_change",
    fault: "model",
    hint: "Nothing was pushed.",
  });
}
