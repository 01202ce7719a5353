import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxLimits, SandboxProvider, Trajectory } from "../../src/contracts.js";
import { AgentFixError } from "../../src/errors.js";
import type { AgentRunner } from "./agent.js";
import { runAgentPhase } from "./agent-phase.js";

export { explainNoPullRequest } from "./agent-phase.js";

import { runBaseline, type TestRun } from "./baseline.js";
import { cloneRepository } from "./checkout.js";
import { makeCheckoutRoot } from "./checkout-dirs.js";
import { type CommitIdentity, commitPatch, pushFixBranch } from "./commit.js";
import type { ImageBuild } from "./devcontainer-build.js";
import type { TestedChange, TestProof } from "./gate.js";
import { git } from "./git.js";
import { prepareTree } from "./prepare.js";
import { publishPullRequest } from "./publish-step.js";
import { RunSandboxes } from "./sandbox.js";
import { secretsIn } from "./secret-scan.js";
import type { Publisher, PullRequestDraft, StatusReporter } from "./types.js";

/** The repository config as the pipeline uses it (validated from .github/agent-fix.yml by src/config/repo.ts). */
export interface PipelineRepoConfig {
  setup: string[];
  setupTimeoutMs: number;
  setupNetwork: boolean;
  testCommand: string;
  testTimeoutMs: number;
  forbiddenPaths: string[];
  testPaths: string[] | undefined;
  openPrWhenBaselineFails: boolean;
  maxSteps: number;
  limits?: Partial<SandboxLimits>;
  /** The image the repository chose and the operator allows (worker/pipeline/image-choice.ts); the provider's default otherwise. */
  image?: string | undefined;
  /** Or the image its devcontainer.json builds, checked (worker/pipeline/devcontainer-build.ts). */
  imageBuild?: ImageBuild | undefined;
}

export interface RunInput {
  jobId: string;
  issue: { number: number; title: string; body: string | null };
  repository: { fullName: string; cloneUrl: string; defaultBranch: string };
  requestedBy: string;
  /** A fresh installation token each call, with only its step's permissions (clone reads, push writes). */
  token: (purpose: "clone" | "push") => Promise<string>;
  /** Parses and validates the checkout's .github/agent-fix.yml; throws ConfigError naming the field. */
  loadConfig: (checkoutDir: string) => Promise<PipelineRepoConfig>;
  setupSecrets: Record<string, string>;
  identity: CommitIdentity;
  sandboxes: SandboxProvider;
  /** The agent loop for this repository's config (model, limits, tools). */
  agentFor: (config: PipelineRepoConfig) => Promise<AgentRunner>;
  publisher: Publisher;
  status: StatusReporter;
  signal: AbortSignal;
  /** Where host checkouts go; a temp dir by default. */
  workRoot?: string;
  /**
   * Review runs: the fix branch to start from, cloned instead of the default branch and pushed to
   * without force (a new commit on top of the reviewed one).
   */
  existingBranch?: string;
  /** The commit's first line when not the issue's title (review runs). */
  commitTitle?: string;
}

/** Milliseconds spent in each step (for logs and bench/pipeline.ts). */
export type RunTimings = Partial<
  Record<"clone" | "sandbox" | "setup" | "baseline" | "agent" | "tests" | "publish", number>
>;

export type RunOutcome = { timings: RunTimings } & (
  | { kind: "pull_request"; number: number; url: string; trajectory: Trajectory }
  | { kind: "no_pull_request"; reason: string; trajectory: Trajectory | null }
);

/**
 * The steps of one fix job, in order. Errors propagate (the processor maps them to retry or not and
 * finalises the status comment); an outcome without a pull request is reported here.
 */
export async function runFix(input: RunInput): Promise<RunOutcome> {
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
    void status.progress("cloning").catch(() => {});
    const checkout = await cloneRepository({
      cloneUrl: input.repository.cloneUrl,
      token: await input.token("clone"),
      dir: join(root, "repo"),
      branch: input.existingBranch ?? input.repository.defaultBranch,
      signal,
    });
    const config = await input.loadConfig(checkout.dir);
    lap("clone");

    void status.progress("setting_up").catch(() => {});
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
      void status.progress("baseline").catch(() => {});
      // The agent's sandbox starts while the baseline runs in a sandbox of its own.
      const agentSandbox = sandboxes.start(prepared.dir);
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

    void status.progress("publishing").catch(() => {});
    refuseSecretsInChange(tested.patch, input.setupSecrets);
    await commitPatch({
      dir: checkout.dir,
      patch: tested.patch,
      identity: input.identity,
      issueNumber: input.issue.number,
      issueTitle: input.commitTitle ?? input.issue.title,
      forbiddenPaths: config.forbiddenPaths,
    });
    await assertCommittedTree(checkout.dir, tested.tree);
    const branch = await pushFixBranch({
      dir: checkout.dir,
      issueNumber: input.issue.number,
      token: await input.token("push"),
      signal,
      ...(input.existingBranch ? { force: false } : {}),
    });
    const draft: PullRequestDraft = {
      issueNumber: input.issue.number,
      testCommand: config.testCommand,
      branch,
      base: input.repository.defaultBranch,
      title: input.issue.title,
      trajectory,
      baseline,
      proof,
    };
    const pr = await publishPullRequest({
      publisher: input.publisher,
      status,
      draft,
      requestedBy: input.requestedBy,
      alongside: disposal,
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

/** The commit about to be pushed holds exactly the tree the gate tested, or nothing is pushed. */
async function assertCommittedTree(dir: string, testedTree: string): Promise<void> {
  const committed = (await git(["rev-parse", "HEAD^{tree}"], { cwd: dir })).trim();
  if (committed === testedTree) return;
  throw new AgentFixError(
    `The commit's tree ${committed} is not the tree the tests ran on (${testedTree}), so nothing was pushed`,
    { code: "published_tree_mismatch", fault: "internal" },
  );
}
