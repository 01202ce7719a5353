/**
 * One run's page: the figures, a link to the failing step, then each step's thought, action and
 * observation, with edits and the submitted change shown as diffs and each gate run's output beside the
 * submit that caused it. Everything from the trajectory is text, escaped by `html`.
 */
import type { GateRecord, Trajectory, TrajectoryStep } from "../../shared/contracts.js";
import { type Html, html } from "./html.js";

/** Which step to look at first: the first submit the tests failed, else the last step of a run that did not submit. */
function failingStepIndex(trajectory: Trajectory, gates: (GateRecord | undefined)[]): number | null {
  const gateFailed = gates.findIndex((record) => record?.passed === false);
  if (gateFailed >= 0) return gateFailed;
  const exit = trajectory.info.exit_status;
  const steps = trajectory.trajectory.length;
  return exit && exit !== "submitted" && steps > 0 ? steps - 1 : null;
}

/** The gate run each step caused (recorded by the loop as gate_attempt). */
function gatesBySteps(trajectory: Trajectory): (GateRecord | undefined)[] {
  const byAttempt = new Map(trajectory.info.gate.map((record) => [record.attempt, record]));
  return trajectory.trajectory.map((step) =>
    step.gate_attempt === undefined ? undefined : byAttempt.get(step.gate_attempt),
  );
}

/** A unified diff, or an edit's `-N:`/`+N:` lines, with added and removed lines marked. */
function diffBlock(text: string): Html {
  const lines = text
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => {
      if (/^(\+\+\+|---) /.test(line) || line.startsWith("diff --git")) return html`<b>${line}</b>\n`;
      if (line.startsWith("@@")) return html`<span class="hunk">${line}</span>`;
      if (line.startsWith("+")) return html`<span class="add">${line}</span>`;
      if (line.startsWith("-")) return html`<span class="del">${line}</span>`;
      return html`${line}\n`;
    });
  return html`<pre class="diff">${lines}</pre>`;
}

const EDIT_TOOLS = new Set(["edit", "str_replace", "insert", "create", "undo_edit", "str_replace_editor"]);

function stepSection(
  step: TrajectoryStep,
  index: number,
  gate: GateRecord | undefined,
  failing: boolean,
): Html {
  const observation = EDIT_TOOLS.has(step.tool)
    ? diffBlock(step.observation)
    : html`<pre>${step.observation}</pre>`;
  const gatePart = gate
    ? html`<div class="label">Gate, attempt ${gate.attempt}: <span class="${gate.passed ? "passed" : "failed"}">${gate.passed ? "passed" : "failed"}</span> (${(gate.durationMs / 1000).toFixed(1)} s)</div><pre>${gate.output}</pre>`
    : "";
  return html`<section class="step${failing ? " failing" : ""}" id="step-${index + 1}">
<h3>Step ${index + 1} · <code>${step.tool || "?"}</code>${failing ? " · failing step" : ""} <small>${step.execution_time.toFixed(1)} s</small></h3>
<div class="label">Thought</div><pre>${step.thought || "(none)"}</pre>
<div class="label">Action</div><pre>${step.action}</pre>
<div class="label">Observation</div>${observation}${gatePart}</section>`;
}

function figures(trajectory: Trajectory, title: string): Html {
  const { info } = trajectory;
  const stats = info.model_stats;
  const seconds = info.finished_at
    ? (Date.parse(info.finished_at) - Date.parse(info.started_at)) / 1000
    : null;
  return html`<h1>${title}</h1><table>
<tr><th>Outcome</th><td><code>${info.exit_status ?? "running"}</code></td></tr>
<tr><th>Model</th><td><code>${info.model}</code></td></tr>
<tr><th>Steps</th><td>${trajectory.trajectory.length}</td></tr>
<tr><th>Tokens</th><td>${stats.tokens_sent} sent, ${stats.tokens_received} received (${stats.api_calls} calls)</td></tr>
<tr><th>Cost</th><td>$${stats.instance_cost.toFixed(4)}</td></tr>
<tr><th>Duration</th><td>${seconds === null ? "running" : `${seconds.toFixed(0)} s`}</td></tr>
<tr><th>Gate runs</th><td>${info.gate.map((g) => (g.passed ? "passed" : "failed")).join(", ") || "none"}</td></tr>
<tr><th>Image</th><td><code>${info.sandbox_image}</code>${info.kept_environment ? html` (kept environment prepared at ${info.kept_environment.prepared_at})` : ""}</td></tr>
</table>`;
}

export function renderRunPage(trajectory: Trajectory, title: string): Html {
  const gates = gatesBySteps(trajectory);
  const failing = failingStepIndex(trajectory, gates);
  const jump =
    failing === null
      ? ""
      : html`<p><a class="jump" href="#step-${failing + 1}">Go to the failing step (${failing + 1})</a></p>`;
  const steps = trajectory.trajectory.map((step, index) =>
    stepSection(step, index, gates[index], index === failing),
  );
  const submission = trajectory.info.submission
    ? html`<h2 id="submission">Submitted change</h2>${diffBlock(trajectory.info.submission)}`
    : html`<h2 id="submission">Submitted change</h2><p>None.</p>`;
  return html`${figures(trajectory, title)}${jump}${submission}<h2>Steps</h2>${steps}`;
}
