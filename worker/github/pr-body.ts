/**
 * The pull request body: what the change does (the agent's final message), `Fixes #N`, how it was
 * tested, and the proof reviewers want when the change adds tests: they failed before and pass after.
 */

import { GITHUB_COM_LINKS, type LinkPolicy } from "../../src/github/inert-links.js";
import { fitComment } from "../../src/github/limits.js";
import { neutralise } from "../../src/github/neutralise.js";
import { type TestChangesView, weakensTests } from "./test-changes.js";

interface TestProofView {
  /** Test files the change adds or modifies. */
  testFiles: string[];
  /** Those tests, applied alone to the unchanged code, failed (as a good regression test should). */
  failedBefore: boolean;
  /** With the whole change, the test command passed. */
  passedAfter: boolean;
}

interface PullRequestBodyInput {
  issueNumber: number;
  /** The agent's final message: what it changed and why. */
  summary: string;
  testCommand: string;
  /** The test command's result on the unchanged code. */
  baselinePassed: boolean;
  /** Gate attempts until the tests passed. */
  gateAttempts: number;
  proof?: TestProofView;
  model: string;
  /** Link to the summary comment or the full trajectory. */
  trajectoryUrl?: string;
  /** What the change does to tests that were already there (shown first when it touches them). */
  testChanges?: TestChangesView;
  /** Hosts the summary may link to or show images from; default github.com only. */
  links?: LinkPolicy;
}

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

/** The top of the body when the change touches existing tests: a reviewer checks the gate first. */
function testChangesSection(view: TestChangesView | undefined): string[] {
  if (!view || !weakensTests(view)) return [];
  const lines = [
    "## ⚠️ Changes to existing tests",
    "",
    "The tests passed on this change; check first that they did not pass because of these changes.",
    "",
  ];
  const list = (label: string, items: string[]) => {
    if (items.length > 0) lines.push(`- ${label}: ${items.map(code).join(", ")}`);
  };
  list("Existing test files modified", view.modified);
  list("Existing test files deleted", view.deleted);
  list("Tests removed", view.removedTests);
  list("Tests skipped or narrowed", view.skips);
  if (view.ran) {
    lines.push(
      `- Fewer tests ran: ${view.ran.before} on the unchanged code, ${view.ran.after} with this change`,
    );
  }
  lines.push("");
  return lines;
}

/**
 * Everything but the `Fixes #N` line passes through neutralise(): the summary is the model's, and file
 * and test names come from its diff.
 */
export function renderPullRequestBody(input: PullRequestBodyInput): string {
  const links = input.links ?? GITHUB_COM_LINKS;
  const lines = [
    ...testChangesSection(input.testChanges).map((line) => neutralise(line, links)),
    neutralise(input.summary.trim(), links) || "_The agent gave no description of its change._",
    "",
    `Fixes #${input.issueNumber}`,
    "",
    "## How this was tested",
    "",
    `- \`${input.testCommand}\` on the unchanged code (baseline): ${input.baselinePassed ? "passed" : "**failed**"}`,
    `- \`${input.testCommand}\` with this change: passed${input.gateAttempts > 1 ? ` (after ${input.gateAttempts} attempts)` : ""}`,
  ];
  if (!input.baselinePassed) {
    lines.push(
      "",
      "> ⚠️ The tests already failed before this change; review what this change fixes with care.",
    );
  }
  if (input.proof && input.proof.testFiles.length > 0) {
    const files = neutralise(input.proof.testFiles.map(code).join(", "), links);
    lines.push("", "### The new tests fail before the change and pass after it", "");
    lines.push(`Test files added or changed: ${files}.`);
    const added = input.testChanges?.addedTests ?? [];
    if (added.length > 0) lines.push("", `Tests added: ${neutralise(added.map(code).join(", "), links)}.`);
    lines.push("");
    lines.push("| | unchanged code + new tests | this change |", "|---|---|---|");
    lines.push(
      `| result | ${input.proof.failedBefore ? "❌ failed" : "✅ passed"} | ${input.proof.passedAfter ? "✅ passed" : "❌ failed"} |`,
    );
    if (!input.proof.failedBefore) {
      lines.push(
        "",
        "Note: the new tests did **not** fail on the unchanged code, so they do not prove the bug is fixed.",
      );
    }
  } else {
    lines.push("", "This change adds or modifies no test files.");
  }
  lines.push("", "---", `Draft opened by agent-fix with \`${input.model}\`. Review before merging.`);
  if (input.trajectoryUrl) lines.push(`[Trajectory](${input.trajectoryUrl})`);
  return fitComment(lines.join("\n"));
}
