/**
 * The work a run leaves when the agent stops on a limit (steps, cost, time, context...) before a change
 * passed the gate: the change as the host computed it from the workspace, the tests' result on it, and
 * how to go on, shown in the final status comment so the work is not lost. The diff is the model's
 * text: it goes verbatim inside a code fence longer than any backtick run in it (GitHub renders
 * nothing inside a fence: no mention, no link, no HTML); the prose around it is neutralised.
 */
import type { ExitStatus } from "../contracts.js";
import type { LinkPolicy } from "./inert-links.js";
import { cutAt, githubLength } from "./limits.js";
import { neutralise } from "./neutralise.js";

/** The tests on the unfinished change, run once in a fresh sandbox (or the last gate's run of it). */
export type LeftWorkTests =
  | {
      kind: "ran";
      passed: boolean;
      exitCode: number;
      timedOut: boolean;
      /** The limit it ran under, when it timed out. */
      timeoutMs?: number;
      /** The last lines of the output; null when withheld (it held a setup secret's value). */
      tail: string | null;
    }
  | { kind: "not_run"; why: string };

export type LeftWorkDiff =
  | { kind: "shown"; patch: string }
  /** The change holds the value of setup secrets (named, never their values): not shown. */
  | { kind: "withheld"; secretNames: string[] };

export interface LeftWork {
  /** How the agent loop ended, e.g. `exit_step_limit`. */
  exitStatus: ExitStatus;
  testCommand: string;
  diff: LeftWorkDiff;
  tests: LeftWorkTests;
}

/** Lines of test output shown at most, and their characters at most. */
const TEST_TAIL_LINES = 15;
const TEST_TAIL_CHARS = 3_000;

/** The `.github/agent-fix.yml` setting that raises the limit the agent stopped on, if there is one. */
const limitSettings: Partial<Record<ExitStatus, string>> = {
  exit_step_limit: "`limits.maxSteps`",
  exit_cost: "`limits.maxCostUsd`",
  exit_time: "`limits.maxTimeMinutes`",
};

/** The last lines of a test run's output, short enough for a comment. */
export function testTail(output: string): string {
  const lines = output.trimEnd().split("\n");
  const tail = lines.slice(-TEST_TAIL_LINES).join("\n");
  const length = githubLength(tail);
  if (length <= TEST_TAIL_CHARS) return tail;
  // Keep the end: it is where test runners print their verdict.
  const skip = cutAt(tail, length - TEST_TAIL_CHARS).length;
  return `…${tail.slice(skip)}`;
}

/** A code fence longer than any run of backticks in `text`, so nothing inside can close it. */
export function fenceFor(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longest + 1));
}

/**
 * The diff cut to at most `budget` characters as GitHub counts them, at a line end where one is in
 * reach, never inside a surrogate pair; `cut` says how many lines are shown of how many.
 */
function fitDiff(
  patch: string,
  budget: number,
): { text: string; cut: { shown: number; total: number } | null } {
  const total = patch.split("\n").length;
  if (githubLength(patch) <= budget) return { text: patch, cut: null };
  let text = cutAt(patch, Math.max(0, budget));
  const lineEnd = text.lastIndexOf("\n");
  if (lineEnd > 0) text = text.slice(0, lineEnd);
  return { text, cut: { shown: text === "" ? 0 : text.split("\n").length, total } };
}

function changeStats(patch: string): string {
  const files = (patch.match(/^diff --git /gm) ?? []).length;
  const added = (patch.match(/^\+(?!\+\+ )/gm) ?? []).length;
  const removed = (patch.match(/^-(?!-- )/gm) ?? []).length;
  return `${files} file${files === 1 ? "" : "s"}, +${added} −${removed}`;
}

function testLines(work: LeftWork, links: LinkPolicy): string[] {
  const { tests } = work;
  const command = `\`${work.testCommand.replace(/`/g, "'")}\``;
  if (tests.kind === "not_run")
    return [neutralise(`**Tests on this change:** not run (${tests.why}).`, links)];
  const verdict = tests.passed
    ? tests.exitCode === 0
      ? `✅ ${command} passed (exit 0)`
      : // Judged test by test: every test passed, the command failed after them as on the unchanged code.
        `✅ ${command}: the tests passed (the command exited ${tests.exitCode} after them, as on the unchanged code)`
    : tests.timedOut
      ? `⏱️ ${command} timed out${tests.timeoutMs ? ` after ${Math.round(tests.timeoutMs / 1000).toLocaleString("en-US")} s` : ""}`
      : `❌ ${command} failed (exit ${tests.exitCode})`;
  const lines = [neutralise(`**Tests on this change:** ${verdict}, in a fresh sandbox.`, links)];
  if (tests.tail === null) {
    lines.push("", "_The test output is withheld: it holds the value of a setup secret._");
  } else if (tests.tail.trim()) {
    const tail = neutralise(tests.tail, links);
    const fence = fenceFor(tail);
    lines.push(
      "",
      "<details><summary>Last lines of the test output</summary>",
      "",
      `${fence}text`,
      tail,
      fence,
      "",
      "</details>",
    );
  }
  return lines;
}

function continueLines(work: LeftWork): string[] {
  const setting = limitSettings[work.exitStatus];
  const raise = setting
    ? ` If the agent needed more room, raise ${setting} in \`.github/agent-fix.yml\` (up to the operator's ceiling) first.`
    : "";
  return [
    `**To continue:** comment \`/agent-fix\` on this issue (or add the label again) to start a new run.${raise} A new run starts from the default branch, not from this change: apply the diff above yourself to keep it.`,
  ];
}

/** The section without its diff, for sizing; `diffLines` are put where the diff goes. */
function assemble(work: LeftWork, diffLines: string[], links: LinkPolicy): string {
  return [
    `### The agent's unfinished work`,
    "",
    neutralise(
      `The agent stopped (\`${work.exitStatus}\`) before a change passed the tests, so nothing was pushed. Its workspace held this change when it stopped.`,
      links,
    ),
    "",
    ...testLines(work, links),
    "",
    ...diffLines,
    "",
    ...continueLines(work),
  ].join("\n");
}

/** The unfinished work as markdown of at most `budget` characters (GitHub's count) when it can fit. */
export function renderLeftWork(work: LeftWork, budget: number, links: LinkPolicy): string {
  const { diff } = work;
  if (diff.kind === "withheld") {
    const names = diff.secretNames.map((name) => `\`${name}\``).join(", ");
    return assemble(
      work,
      [`_The diff is withheld: it holds the value of the setup secret(s) ${neutralise(names, links)}._`],
      links,
    );
  }
  const summary = `<details><summary>The change (${changeStats(diff.patch)})</summary>`;
  const fence = fenceFor(diff.patch);
  const frame = (body: string, note: string) => [
    summary,
    "",
    `${fence}diff`,
    body,
    fence,
    ...(note ? ["", note] : []),
    "",
    "</details>",
  ];
  const noteFor = (cut: { shown: number; total: number }) =>
    `_The diff is cut to fit GitHub's comment limit: ${cut.shown.toLocaleString("en-US")} of ${cut.total.toLocaleString("en-US")} lines shown._`;
  // The longest note the cut can need, so that the diff's room is known before cutting.
  const widest = noteFor({ shown: Number.MAX_SAFE_INTEGER, total: Number.MAX_SAFE_INTEGER });
  const room = budget - githubLength(assemble(work, frame("", widest), links));
  // The patch's final newline would show as an empty line before the closing fence.
  const fitted = fitDiff(diff.patch.replace(/\n$/, ""), room);
  return assemble(work, frame(fitted.text, fitted.cut ? noteFor(fitted.cut) : ""), links);
}
