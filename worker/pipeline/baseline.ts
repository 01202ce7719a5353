import type { Sandbox } from "../../src/contracts.js";

export interface TestRun {
  passed: boolean;
  exitCode: number;
  timedOut: boolean;
  output: string;
  durationMs: number;
}

export interface TestCommand {
  command: string;
  timeoutMs: number;
}

/** Runs the repository's test command in the sandbox's workspace; a failure is a result. */
export async function runTests(sandbox: Sandbox, test: TestCommand, signal?: AbortSignal): Promise<TestRun> {
  const run = await sandbox.exec(test.command, {
    cwd: sandbox.workdir,
    timeoutMs: test.timeoutMs,
    ...(signal ? { signal } : {}),
  });
  return {
    passed: run.exitCode === 0 && !run.timedOut,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    output: run.output,
    durationMs: run.durationMs,
  };
}

/**
 * Step 6 of docs/architecture.md: the tests once on the unchanged code, so the outcome can be told apart
 * from what was there.
 */
export function runBaseline(sandbox: Sandbox, test: TestCommand, signal?: AbortSignal): Promise<TestRun> {
  return runTests(sandbox, test, signal);
}
