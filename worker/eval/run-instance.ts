/**
 * One instance through the app's own steps (the run's prepare to gate steps, worker/run/run-fix.ts): the prepared tree from the
 * instance's setup, the baseline, the agent with its gate, then grading in a fresh sandbox. The host
 * checkout replaces the app's clone, and nothing is committed or published.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { SandboxProvider, Trajectory } from "../../src/shared/contracts.js";
import { RunSandboxes } from "../run/prepare/run-sandboxes.js";
import type { AgentRunner } from "../run/solve/agent-run-input.js";
import { solve } from "../run/solve/solve.js";
import { runBaseline } from "../run/tests/test-run.js";
import { checkoutInstance, prepareInstanceTree } from "./checkout.js";
import { type Grade, gradeInstance, testCommandFor } from "./grade.js";
import type { EvalInstance } from "./instances.js";
import { instanceCommands } from "./test-runner.js";

const GATE_TIMEOUT_MS = 30 * 60_000;

interface InstanceRunDeps {
  jobId: string;
  /** Starts sandboxes from the instance's image. */
  provider: SandboxProvider;
  /** The image the checkout calls for (an instance naming none); undefined keeps the provider's default. */
  imageFor?: ((checkoutDir: string) => Promise<string | undefined>) | undefined;
  maxSteps: number;
  /** The agent loop, told the gate's command. */
  agentFor: (testCommand: string) => Promise<AgentRunner>;
  signal: AbortSignal;
}

interface InstanceRun {
  trajectory: Trajectory;
  /** The change graded: the agent's last submission ("" when none). */
  patch: string;
  /** The gate's tests passed on the unchanged code. */
  baselinePassed: boolean;
  /** Why the app would have opened no pull request (null: the gate accepted the change). */
  noPullRequestReason: string | null;
  grade: Grade;
}

export async function runInstance(instance: EvalInstance, deps: InstanceRunDeps): Promise<InstanceRun> {
  const { signal } = deps;
  const root = await mkdtemp(join(tmpdir(), "agent-fix-eval-"));
  // A cancel disposes every sandbox of the instance at once (RunSandboxes listens to the signal).
  const sandboxes = new RunSandboxes(deps.provider, { jobId: deps.jobId }, signal);
  try {
    const checkout = await checkoutInstance(instance.repo, instance.base_commit, join(root, "repo"), signal);
    const image = await deps.imageFor?.(checkout.dir);
    if (image !== undefined) sandboxes.useImage(image);
    const { setup, testCommand } = await instanceCommands(instance, checkout.dir);
    const prepared = await prepareInstanceTree(sandboxes, checkout, root, setup, signal);
    // The gate runs the tests that passed before the change (all of them when none are listed): the
    // repository's own tests, as in the app; FAIL_TO_PASS does not exist before the test patch.
    const test = {
      command: testCommandFor(testCommand, instance.PASS_TO_PASS),
      timeoutMs: GATE_TIMEOUT_MS,
    };
    const agentSandbox = sandboxes.start(prepared.dir);
    agentSandbox.catch(() => {});
    const baseline = await sandboxes.using(prepared.dir, (sandbox) => runBaseline(sandbox, test, signal));
    const sandbox = await agentSandbox;
    const solved = await solve({
      agent: deps.agentFor(test.command),
      sandbox,
      gateSetup: { prepared, sandboxes, test, scratch: join(root, "scratch") },
      maxSteps: deps.maxSteps,
      issue: issueOf(instance),
      repoName: repoName(instance.repo),
      signal,
      secrets: {},
      status: { progress: async () => {} },
    });
    // No baseline alongside: the run never stops for it, so there is always a trajectory. No proof
    // step either: grading is what proves the change here.
    if (solved.kind === "baseline_stopped")
      throw new Error("a baseline stopped an evaluation run without one");
    const outcome = { trajectory: solved.trajectory };
    const noPullRequestReason = solved.kind === "no_pull_request" ? solved.reason : null;
    const patch = outcome.trajectory.info.submission ?? "";
    const grade = await gradeInstance(
      { sandboxes, prepared },
      { ...instance, test_command: testCommand },
      patch,
      signal,
    );
    return {
      trajectory: outcome.trajectory,
      patch,
      baselinePassed: baseline.passed,
      noPullRequestReason,
      grade,
    };
  } finally {
    await sandboxes.disposeAll();
    await rm(root, { recursive: true, force: true });
  }
}

/** SWE-bench's problem statements start with the issue's title. */
function issueOf(instance: EvalInstance): { number: number; title: string; body: string } {
  const [title = "", ...rest] = instance.problem_statement.trim().split("\n");
  return { number: 0, title: title.replace(/^#+\s*/, "").trim(), body: rest.join("\n").trim() };
}

function repoName(repo: string): string {
  return basename(repo.replace(/\/+$/, "")).replace(/\.git$/, "");
}
