import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Gate, Sandbox } from "../../../src/shared/contracts.js";
import { AgentFixError, SandboxError } from "../../../src/shared/errors.js";
import type { PreparedTree } from "../prepare/prepare-tree.js";
import type { RunSandboxes } from "../prepare/run-sandboxes.js";
import {
  DEFAULT_INTAKE_LIMITS,
  extractArchive,
  type IntakeLimits,
  RECEIVE_HINT,
  type ReceiveLimits,
  readableSize,
} from "../prepare/workspace-archive.js";
import {
  type BaseCommit,
  changedPaths,
  diffTrees,
  skippedDirs,
  treeOfDirectory,
} from "../prepare/workspace-tree.js";
import { perTestVerdict } from "../tests/per-test-verdict.js";
import { prepareTestReports } from "../tests/test-reports.js";
import { runTests, type TestCommand, type TestRun } from "../tests/test-run.js";
import { gateTimeLimit, type TestTimeLimit } from "../tests/test-time-limit.js";
import { gateVerdictText, perTestVerdictText, withBaselineNote } from "../tests/test-verdicts.js";

/** A change as the host computed it from the agent's workspace files. */
export interface TestedChange {
  /** Against the base commit: what is recorded, committed and pushed. */
  patch: string;
  /** The tree of the paths that count, as exported (the commit must end up with exactly this tree). */
  tree: string;
}

export interface GateSetup {
  prepared: PreparedTree;
  sandboxes: RunSandboxes;
  test: TestCommand;
  /** Where exported workspaces are unpacked (a directory of the run). */
  scratch: string;
  /** What the host takes in from a submit: the operator's limits (default DEFAULT_INTAKE_LIMITS). */
  intake?: IntakeLimits;
  /** The time limit of a run on a change, from the baseline's time (test-time-limit.ts); absent: `test.timeoutMs`. */
  timeLimit?: () => TestTimeLimit;
  /**
   * The baseline's run, when the run has one: each verdict waits for it, and is given test by
   * test against it when both runs have per-test results (per-test-verdict.ts).
   */
  baseline?: Promise<TestRun>;
}

/**
 * The gate of a run: its prepared tree and sandboxes, the repository's test command, and a time limit
 * that follows the baseline's time once it is known (test-time-limit.ts).
 */
export function runGateSetup(
  config: { testCommand: string; testTimeoutMs: number; testTimeoutCeilingMs?: number | undefined },
  prepared: PreparedTree,
  sandboxes: RunSandboxes,
  workDir: string,
  intake: IntakeLimits,
  baselineMs: () => number | null,
): GateSetup {
  return {
    prepared,
    sandboxes,
    test: { command: config.testCommand, timeoutMs: config.testTimeoutMs },
    scratch: join(workDir, "scratch"),
    intake,
    timeLimit: () =>
      gateTimeLimit({
        configuredMs: config.testTimeoutMs,
        ceilingMs: config.testTimeoutCeilingMs ?? config.testTimeoutMs,
        baselineMs: baselineMs(),
      }),
  };
}

/** The test command with the limit a run on a change gets now (asked as its sandbox is ready). */
function limitedTest(setup: GateSetup): TestCommand {
  const limit = setup.timeLimit?.();
  return limit ? { ...setup.test, timeoutMs: limit.timeoutMs, limit } : setup.test;
}

/**
 * Untracked files a submitted workspace may hold, per file a change may touch: build output the
 * repository's .gitignore leaves out is exported too (the skipped directories are not), and costs the
 * host a walk and a hash each; twenty per changed file bounds that work by the change's own limit.
 */
const UNTRACKED_PER_CHANGED_FILE = 20;

/** The submit's export: the base commit's files and their directories, the untracked allowance, the workspace's size. */
function submitLimits(base: BaseCommit, intake: IntakeLimits): ReceiveLimits {
  const untracked = intake.changeFiles * UNTRACKED_PER_CHANGED_FILE;
  return {
    maxBytes: intake.workspaceBytes,
    maxEntries: 2 * base.tracked.size + untracked,
    bytesLimit: "the workspace's size, AGENT_FIX_WORKSPACE_SIZE",
    entriesLimit: `the base commit's ${base.tracked.size.toLocaleString("en-US")} files and their directories, plus ${untracked.toLocaleString("en-US")} untracked: ${UNTRACKED_PER_CHANGED_FILE} × AGENT_FIX_CHANGE_MAX_FILES`,
  };
}

/** The top directories of `paths` with most of them, for a refusal the agent can act on. */
function busiestDirs(paths: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const path of paths) {
    const top = path.includes("/") ? `${path.split("/")[0]}/` : path;
    counts.set(top, (counts.get(top) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([top, n]) => `${top} (${n.toLocaleString("en-US")})`)
    .join(", ");
}

/** Refuses a change past the operator's limits before it is tested, committed or published. */
async function refuseLargeChange(base: BaseCommit, tree: string, intake: IntakeLimits): Promise<string> {
  const paths = await changedPaths(base, base.tree, tree);
  if (paths.length > intake.changeFiles) {
    throw new SandboxError(
      `the change touches ${paths.length.toLocaleString("en-US")} files, more than ${intake.changeFiles.toLocaleString("en-US")} (AGENT_FIX_CHANGE_MAX_FILES); most are under ${busiestDirs(paths)}`,
      { code: "receive_limit", hint: RECEIVE_HINT },
    );
  }
  const patch = await diffTrees(base, base.tree, tree);
  const bytes = Buffer.byteLength(patch);
  if (bytes > intake.changeBytes) {
    throw new SandboxError(
      `the change is ${readableSize(bytes)} as a patch, more than ${readableSize(intake.changeBytes)} (AGENT_FIX_CHANGE_MAX_BYTES)`,
      { code: "receive_limit", hint: RECEIVE_HINT },
    );
  }
  return patch;
}

export interface PipelineGate<T = never> {
  gate: Gate;
  /** The change the last gate run tested (null before the first). */
  lastTested(): TestedChange | null;
  /** The last gate's test run, with the change it tested (null before the first). */
  lastRun(): { change: TestedChange; run: TestRun } | null;
  /** The work started beside the gate that passed `change` (null: none, or that gate failed). */
  alongsideOf(change: TestedChange): Promise<T> | null;
  /** Stops the work beside the last gate (the run ends without publishing it). */
  stopAlongside(): void;
}

/**
 * Work on a submitted change that only a passing gate needs (the proof), run in its own sandbox while
 * the gate's tests run rather than after them: stopped (`signal`) when the gate fails or the agent
 * submits again, as nothing would use it.
 */
export type AlongsideGate<T> = (change: TestedChange, signal: AbortSignal) => Promise<T>;

interface Beside<T> {
  tree: string;
  work: Promise<T>;
  stop: AbortController;
}

function startBeside<T>(
  alongside: AlongsideGate<T>,
  change: TestedChange,
  signal: AbortSignal | undefined,
  after: Promise<void>,
): Beside<T> {
  const stop = new AbortController();
  const both = signal ? AbortSignal.any([stop.signal, signal]) : stop.signal;
  // Stopped while it waited (the gate failed first): it takes no sandbox.
  const work = after.then(() => {
    both.throwIfAborted();
    return alongside(change, both);
  });
  work.catch(() => {}); // its taker awaits it; a stopped one is nobody's
  return { tree: change.tree, work, stop };
}

/** Reads the agent's workspace files out of its sandbox (never through its shell) and computes the change. */
export async function captureChange(setup: GateSetup, workspace: Sandbox): Promise<TestedChange> {
  const { base } = setup.prepared;
  const dir = await mkdtemp(join(setup.scratch, "submitted-"));
  try {
    const archive = await workspace.exportWorkspace({ excludeDirs: skippedDirs(base) });
    const intake = setup.intake ?? DEFAULT_INTAKE_LIMITS;
    await extractArchive(archive, dir, submitLimits(base, intake));
    const tree = await treeOfDirectory(base, dir);
    return { patch: await refuseLargeChange(base, tree, intake), tree };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const CHANGE_FILE = ".git/agent-fix-change.patch";

/** The sandboxes a submission takes when its proof runs beside its gate: the gate's and the proof's. */
export const SUBMISSION_SANDBOXES = 2;

/**
 * The tests in a sandbox started from the prepared tree, with the part of `change` under `paths` (all
 * of it by default) applied first: nothing the agent left anywhere can act on this run. The change (or
 * its capture, still going) is waited for in the sandbox already taken, its test reports prepared
 * meanwhile; one that rejects releases the sandbox untested.
 */
export async function testChange(
  setup: GateSetup,
  change: TestedChange | Promise<TestedChange>,
  options: {
    signal?: AbortSignal | undefined;
    paths?: string[];
    prewarmNext?: boolean;
    /** Called once the change is in the sandbox, just before the tests run. */
    onApplied?: () => void;
  } = {},
): Promise<TestRun> {
  const { prepared } = setup;
  const { signal, paths } = options;
  // Awaited once the sandbox is taken: a change refused before then is no unhandled rejection (which
  // would end the worker's process), it releases the sandbox untested.
  const known = Promise.resolve(change);
  known.catch(() => {});
  // The whole change on the base commit's own tree (no setup) is the patch the change already holds.
  const whole = paths === undefined && prepared.tree === prepared.base.tree;
  const patchOf = async (tested: TestedChange) =>
    whole ? tested.patch : await diffTrees(prepared.base, prepared.tree, tested.tree, paths);
  const prewarm = options.prewarmNext ? { prewarmNext: true } : {};
  /** The change written and applied with git in the sandbox (the file shell writes, the agent's shell applies). */
  const apply = async (sandbox: Sandbox, patch: string) => {
    await sandbox.writeFile(CHANGE_FILE, patch);
    const applied = await sandbox.exec(
      `git apply --binary --whitespace=nowarn ${CHANGE_FILE}; s=$?; rm -f ${CHANGE_FILE}; exit $s`,
      {
        timeoutMs: 120_000,
        ...(signal ? { signal } : {}),
      },
    );
    if (applied.exitCode !== 0) {
      throw new AgentFixError(
        `The change could not be applied to a fresh copy of the repository: ${applied.output.trim()}`,
        {
          code: "change_does_not_apply",
          fault: "internal",
        },
      );
    }
  };
  return setup.sandboxes.using(
    prepared.dir,
    async (sandbox) => {
      const reports = prepareTestReports(sandbox, signal);
      reports.catch(() => {}); // awaited by runTests, unless the change never comes
      const patch = await patchOf(await known);
      const first = async () => {
        if (patch !== "") await apply(sandbox, patch);
        options.onApplied?.();
      };
      return runTests(sandbox, limitedTest(setup), signal, first, reports);
    },
    prewarm,
  );
}

/**
 * The run's gate step, the gate. The agent's own diff is never used: each attempt exports the
 * workspace's files, computes the change on the host, and runs the tests on it in a fresh sandbox; the
 * change it tested is what the trajectory records and what is published.
 */
export function createGate<T = never>(
  setup: GateSetup,
  workspace: Sandbox,
  onRun?: (run: TestRun) => void,
  alongside?: AlongsideGate<T>,
): PipelineGate<T> {
  let tested: TestedChange | null = null;
  let lastRun: { change: TestedChange; run: TestRun } | null = null;
  let passedBeside: Beside<T> | null = null;
  const stopAlongside = () => {
    passedBeside?.stop.abort();
    passedBeside = null;
  };
  const gate: Gate = async (_agentPatch, signal) => {
    // A new submission: what ran beside the last gate is of no use any more.
    stopAlongside();
    const captured = captureChange(setup, workspace);
    // The gate's sandbox is taken, and its test reports prepared, while the change is captured; a change
    // refused or empty releases it untested. Without work beside it, the next attempt (or the proof)
    // gets a sandbox started while this one tests.
    let appliedNow = () => {};
    const applied = new Promise<void>((resolve) => {
      appliedNow = resolve;
    });
    const judged = verdictOf(
      captured.then((known) => (known.patch === "" ? Promise.reject(new Error("no change")) : known)),
      signal,
      !alongside,
      appliedNow,
    );
    void judged.finally(appliedNow).catch(() => {});
    judged.catch(() => {}); // awaited below once the change is known to be tested
    let change: TestedChange;
    try {
      change = await captured;
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      const hint = error.hint ? `\n${error.hint}` : "";
      const output = `Your change was not submitted, and no attempt was used: ${error.message}${hint}`;
      return { passed: false, untested: true, output };
    }
    if (change.patch === "") {
      return {
        passed: false,
        submission: "",
        output:
          "The repository's files are the same as the commit you started from: there is no change to test.",
      };
    }
    // Begun once the gate's change is in its sandbox: the gate, which the agent waits for, took the
    // sandbox started ahead and applies its change without the proof's applying beside it.
    const beside = alongside ? startBeside(alongside, change, signal, applied) : null;
    const verdict = await judged.catch((error: unknown) => {
      beside?.stop.abort();
      throw error;
    });
    if (verdict.passed) passedBeside = beside;
    else if (beside) {
      beside.stop.abort();
      // The sandboxes the attempt held are gone: the next attempt's (and its proof's) start now, while
      // the agent reads.
      setup.sandboxes.prewarm(setup.prepared.dir, SUBMISSION_SANDBOXES);
    }
    return verdict;
  };
  /** The tests on the change (once captured) in a fresh sandbox, and what the agent is told of them. */
  const verdictOf = async (
    testable: Promise<TestedChange>,
    signal: AbortSignal | undefined,
    prewarmNext: boolean,
    onApplied: () => void,
  ) => {
    const run = await testChange(setup, testable, { signal, prewarmNext, onApplied });
    const change = await testable;
    tested = change;
    lastRun = { change, run };
    onRun?.(run);
    const command = setup.test.command;
    const baseline = setup.baseline ? await setup.baseline : null;
    const perTest = baseline ? perTestVerdict(baseline, run) : null;
    if (perTest) {
      const verdict = perTestVerdictText(command, run, perTest);
      return { passed: perTest.passed, output: `${verdict}\n${run.output}`, submission: change.patch };
    }
    const verdict = {
      passed: run.passed,
      output: `${gateVerdictText(command, run)}\n${run.output}`,
      submission: change.patch,
    };
    // A run that goes on though the tests failed before: the model is told so with the verdict.
    return baseline ? withBaselineNote(verdict, baseline, command) : verdict;
  };
  return {
    gate,
    lastTested: () => tested,
    lastRun: () => lastRun,
    alongsideOf: (change) => (passedBeside?.tree === change.tree ? passedBeside.work : null),
    stopAlongside,
  };
}

/** The paths a unified diff touches (both sides of a rename), without a/ and b/ prefixes. */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const line of patch.split("\n")) {
    const match =
      /^(?:---|\+\+\+) (?:"?[ab]\/)(.*?)"?\t?$/.exec(line) ?? /^rename (?:from|to) (.*)$/.exec(line);
    if (match?.[1]) paths.add(match[1]);
  }
  return [...paths];
}
