/**
 * The tests that failed before any change (the run's baseline step), as the final status shows
 * them: what the run took the failure for (the environment or the tests), the last lines of the output,
 * and what the agent had spent when the failure stopped it. The output is the repository's text (and,
 * through what its tests print, anyone's): it goes verbatim inside a code fence longer than any backtick
 * run in it, as the unfinished work's diff does (GitHub renders nothing inside a fence: no link, image,
 * mention or HTML), so a reader sees exactly what the tests printed, `<` and URLs included.
 */
import { fenceFor } from "./left-work.js";

/** What in the sandbox a failure that is not the tests' points at. */
export type EnvironmentCause = "toolchain" | "command" | "module" | "network" | "service";

/** What a failing test run looks like: the environment, a timeout, or real failing tests. */
export type TestFailureClass =
  | {
      kind: "environment";
      cause: EnvironmentCause;
      /** The output's line that says so, as printed (the repository's text). */
      evidence: string;
      /** What is missing when the output names it: a command, a module, a host (safe characters only). */
      subject: string | null;
    }
  | { kind: "timeout" }
  | { kind: "tests" };

/** A model's use as the status reports it: what the agent had spent when it was stopped. */
export interface ModelSpend {
  calls: number;
  tokensSent: number;
  tokensReceived: number;
  costUsd: number;
  /** A call was on its way when the run stopped: cancelled, so its tokens are not known. */
  cancelledCall: boolean;
}

export interface BaselineFailure {
  testCommand: string;
  exitCode: number;
  durationMs: number;
  /** The limit it ran under, for a timeout. */
  timeoutMs: number;
  failure: TestFailureClass;
  /** The last lines of the output; null when withheld (it held a setup secret's value). */
  tail: string | null;
  /** What the agent had spent when the baseline stopped it; null when it had not started. */
  spent: ModelSpend | null;
}

const CAUSE_WORDS: Record<EnvironmentCause, string> = {
  toolchain: "the toolchain (a crash at start-up)",
  command: "a missing command",
  module: "a missing module or package",
  network: "the network (the sandbox has none while the tests run)",
  service: "a service that is not running (connection refused)",
};

/** "the environment (…)", "a timeout" or "real failing tests": what the run took the failure for. */
export function failureClassWords(failure: TestFailureClass): string {
  if (failure.kind === "environment") return `the environment: ${CAUSE_WORDS[failure.cause]}`;
  return failure.kind === "timeout" ? "a timeout" : "real failing tests";
}

function seconds(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000)).toLocaleString("en-US")} s`;
}

function verdictLine(baseline: BaselineFailure): string {
  const command = `\`${baseline.testCommand.replace(/`/g, "'")}\``;
  const outcome =
    baseline.failure.kind === "timeout"
      ? `timed out after ${seconds(baseline.timeoutMs)}`
      : `exited ${baseline.exitCode} after ${seconds(baseline.durationMs)}`;
  return `**Tests before any change:** ❌ ${command} ${outcome}, in a fresh sandbox. It looks like **${failureClassWords(baseline.failure)}**.`;
}

/** `text` as a fenced block GitHub shows as it is. */
function fenced(text: string): string[] {
  const fence = fenceFor(text);
  return [`${fence}text`, text, fence];
}

function tailLines(baseline: BaselineFailure): string[] {
  const { tail, failure } = baseline;
  if (tail === null) return ["", "_The test output is withheld: it holds the value of a setup secret._"];
  if (!tail.trim()) return ["", "_The test command printed nothing._"];
  const lines = ["", "Last lines of its output:", "", ...fenced(tail)];
  // The line the verdict rests on, when the tail does not show it (a crash's stack trace came after).
  if (failure.kind === "environment" && !tail.includes(failure.evidence)) {
    lines.push("", "The line that says so:", "", ...fenced(failure.evidence));
  }
  return lines;
}

/** The agent's spend, said plainly: no model call of the run goes unreported. */
function spendLine(spent: ModelSpend): string {
  if (spent.calls === 0) {
    return spent.cancelledCall
      ? "**Spent before the stop:** no model call had finished; the first was on its way and was cancelled: its tokens are not known."
      : "**Spent before the stop:** nothing: the agent had made no model call.";
  }
  const calls = `${spent.calls.toLocaleString("en-US")} model call${spent.calls === 1 ? "" : "s"}`;
  const tokens = `${spent.tokensSent.toLocaleString("en-US")} tokens sent, ${spent.tokensReceived.toLocaleString("en-US")} received`;
  const cancelled = spent.cancelledCall
    ? " One more call was on its way and was cancelled: its tokens are not known."
    : "";
  return `**Spent before the stop:** the agent had made ${calls} (${tokens}, $${spent.costUsd.toFixed(4)}).${cancelled}`;
}

/** The failing baseline's section of the final status comment. */
export function renderBaselineFailure(baseline: BaselineFailure): string {
  const lines = [verdictLine(baseline), ...tailLines(baseline)];
  if (baseline.spent) lines.push("", spendLine(baseline.spent));
  return lines.join("\n");
}
