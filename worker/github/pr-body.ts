/**
 * The pull request body: the description (the model's, asked for as such, or the repository's template
 * it filled in; else one built from the run's facts), `Fixes #N`, how it was tested, and the proof
 * reviewers want when the change adds tests: they failed before and pass after. The app's own parts
 * stay outside the model's text.
 */

import { GITHUB_COM_LINKS, type LinkPolicy } from "../../src/shared/github/inert-links.js";
import { cutAt, fitComment } from "../../src/shared/github/limits.js";
import { neutralise } from "../../src/shared/github/neutralise.js";
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
  /** The issue's title: the description built from the facts names it. */
  issueTitle: string;
  /** The pull request's description as the model gave it on submit (trajectory info.description); null: none. */
  description: string | null;
  /** The change as tested: the description built from the facts lists its files. */
  patch: string;
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

/** The most of the model's description a body shows: the body's own parts need the rest of the room. */
export const DESCRIPTION_MAX_CHARS = 20_000;

/**
 * The model's description as a reviewer reads it: HTML comments (a template's hints, or text hidden
 * from the reviewer) removed, and bounded with a note.
 */
function modelDescription(text: string): string {
  const cleaned = text
    .replace(/\r\n?/g, "\n")
    // A comment on lines of its own goes with its lines; one inside a line, alone.
    .replace(/^[ \t]*<!--[\s\S]*?-->[ \t]*(\n|$)/gm, "")
    .replace(/<!--[\s\S]*?(-->|$)/g, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (cleaned.length <= DESCRIPTION_MAX_CHARS) return cleaned;
  return `${cutAt(cleaned, DESCRIPTION_MAX_CHARS).trimEnd()}\n\n_…the description was cut here: ${DESCRIPTION_MAX_CHARS.toLocaleString("en-US")} of ${cleaned.length.toLocaleString("en-US")} characters shown._`;
}

/** The files a unified diff changes, in its order (a rename by its new name, a deletion by its old). */
function changedFiles(patch: string): string[] {
  const files: string[] = [];
  for (const match of patch.matchAll(/^diff --git "?a\/(.*?)"? "?b\/(.*?)"?$/gm)) {
    files.push(match[2] || match[1] || "?");
  }
  return files;
}

/** With no description from the model (an old replay, a limit reached): what the run knows, said as such. */
function factsDescription(input: PullRequestBodyInput): string {
  const lines = [
    "_The agent gave no description of its change; this one is built from the run._",
    "",
    `This change is for the issue “${input.issueTitle.trim()}”.`,
  ];
  const files = changedFiles(input.patch);
  if (files.length > 0) {
    const more = files.length > 20 ? ` and ${files.length - 20} more` : "";
    const count = files.length === 1 ? "one file" : `${files.length} files`;
    lines.push(`It changes ${count}: ${files.slice(0, 20).map(code).join(", ")}${more}.`);
  }
  return lines.join("\n");
}

/**
 * Everything but the `Fixes #N` line passes through neutralise(): the description is the model's, the
 * issue's title its author's, and file and test names come from the model's diff.
 */
export function renderPullRequestBody(input: PullRequestBodyInput): string {
  const links = input.links ?? GITHUB_COM_LINKS;
  const given = input.description === null ? "" : modelDescription(input.description);
  const lines = [
    ...testChangesSection(input.testChanges).map((line) => neutralise(line, links)),
    neutralise(given || factsDescription(input), links),
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
