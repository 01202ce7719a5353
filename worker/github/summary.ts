/**
 * The trajectory summary posted on the pull request (and in a failed run's status comment): outcome,
 * model, steps, tokens, cost, wall time, tests before and after, a table of the steps and the thoughts
 * in a collapsed block, cut to fit GitHub's comment limit with a note, never rejected for size. The
 * steps (thoughts, arguments, tool output) are the model's and the repository's text: neutralised.
 */
import type { Trajectory, TrajectoryStep } from "../../src/shared/contracts.js";
import { GITHUB_COM_LINKS, type LinkPolicy } from "../../src/shared/github/inert-links.js";
import { cutAt, GITHUB_BODY_LIMIT } from "../../src/shared/github/limits.js";
import { neutralise } from "../../src/shared/github/neutralise.js";
import { observationResult } from "./observation-result.js";

interface SummaryOptions {
  /** Result of the test command before the change; undefined when it was not run. */
  testsBefore?: boolean;
  /** Result of the gate on the final change; default: the last gate record. */
  testsAfter?: boolean;
  /** Link to the full trajectory (PUBLIC_URL). */
  trajectoryUrl?: string;
  /** Total characters allowed (tests use small limits). */
  limit?: number;
  /** Hosts the model's text may link to or show images from; default github.com only. */
  links?: LinkPolicy;
}

const SUMMARY_MARKER = "<!-- agent-fix:summary -->";

function cell(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const short = flat.length > max ? `${cutAt(flat, max - 1)}…` : flat;
  return short.replace(/\|/g, "\\|").replace(/</g, "&lt;") || " ";
}

function shortArgs(args: unknown): string {
  if (args === undefined || args === null) return "";
  if (typeof args === "string") return args;
  return Object.entries(args as Record<string, unknown>)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function verdict(passed: boolean | undefined): string {
  return passed === undefined ? "not run" : passed ? "✅ passed" : "❌ failed";
}

function header(trajectory: Trajectory, options: SummaryOptions): string {
  const { info } = trajectory;
  const stats = info.model_stats;
  const lastGate = info.gate.at(-1);
  const after = options.testsAfter ?? lastGate?.passed;
  const wall =
    info.finished_at && info.started_at
      ? duration(Date.parse(info.finished_at) - Date.parse(info.started_at))
      : "unknown";
  return [
    "## agent-fix trajectory",
    "",
    "| | |",
    "|---|---|",
    `| Outcome | \`${info.exit_status ?? "unfinished"}\` |`,
    `| Model | \`${info.model}\` |`,
    `| Steps | ${trajectory.trajectory.length} |`,
    `| Tokens | ${stats.tokens_sent.toLocaleString("en-US")} sent, ${stats.tokens_received.toLocaleString("en-US")} received (${stats.api_calls} calls) |`,
    `| Cost | $${stats.instance_cost.toFixed(4)} |`,
    `| Wall time | ${wall} |`,
    `| Tests before | ${verdict(options.testsBefore)} |`,
    `| Tests after | ${verdict(after)}${info.gate.length > 1 ? ` (${info.gate.length} gate runs)` : ""} |`,
  ].join("\n");
}

function row(step: TrajectoryStep, index: number): string {
  return `| ${index + 1} | \`${cell(step.tool || "?", 30)}\` | ${cell(shortArgs(step.args), 80)} | ${cell(observationResult(step.tool, step.observation), 100)} | ${step.execution_time.toFixed(1)} s |`;
}

function thought(step: TrajectoryStep, index: number): string {
  return `**${index + 1}.** ${step.thought.trim().replace(/<\/details>/g, "&lt;/details>") || "_(no thought)_"}\n`;
}

export function renderTrajectorySummary(trajectory: Trajectory, options: SummaryOptions = {}): string {
  const limit = (options.limit ?? GITHUB_BODY_LIMIT) - 64;
  const steps = trajectory.trajectory;
  const links = options.links ?? GITHUB_COM_LINKS;
  // The marker is the app's own HTML comment: added after the neutraliser, which escapes every `<`.
  const head = `${SUMMARY_MARKER}\n${neutralise(header(trajectory, options), links)}`;
  const tableHead = "\n\n### Steps\n\n| # | Tool | Arguments | Observation | Time |\n|---|---|---|---|---|";
  const link = options.trajectoryUrl ? `\n\n[Full trajectory](${options.trajectoryUrl})` : "";
  const rows = steps.map((step, index) => neutralise(row(step, index), links));
  const thoughts = steps.map((step, index) => neutralise(thought(step, index), links));
  const render = (rowCount: number, thoughtCount: number) => {
    const omittedRows = steps.length - rowCount;
    const omittedThoughts = steps.length - thoughtCount;
    const cutNote =
      omittedRows > 0 || omittedThoughts > 0
        ? `\n\n_Cut to fit GitHub's 65,536-character limit: ${omittedRows} step rows and ${omittedThoughts} thoughts left out${options.trajectoryUrl ? "; the full trajectory is linked below" : ""}._`
        : "";
    const table = steps.length ? `${tableHead}\n${rows.slice(0, rowCount).join("\n")}` : "\n\n_No steps._";
    const details = thoughtCount
      ? `\n\n<details><summary>Thoughts (${thoughtCount} of ${steps.length})</summary>\n\n${thoughts.slice(0, thoughtCount).join("\n")}\n</details>`
      : "";
    return `${head}${table}${details}${cutNote}${link}`;
  };
  const full = render(rows.length, thoughts.length);
  if (full.length <= limit) return full;
  // Keep as many rows as fit first (they are short), then as many thoughts as still fit.
  let rowCount = rows.length;
  while (rowCount > 0 && render(rowCount, 0).length > limit) rowCount = Math.floor(rowCount * 0.9);
  let thoughtCount = 0;
  let step = Math.max(1, Math.floor(thoughts.length / 2));
  while (step >= 1) {
    if (thoughtCount + step <= thoughts.length && render(rowCount, thoughtCount + step).length <= limit)
      thoughtCount += step;
    else step = Math.floor(step / 2);
  }
  const result = render(rowCount, thoughtCount);
  // A single enormous thought or header could still exceed: hard cut as a last resort.
  return result.length <= limit
    ? result
    : `${cutAt(result, limit - 80)}\n\n_…cut to fit GitHub's comment limit._`;
}
