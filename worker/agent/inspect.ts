/** `agent-fix inspect`: a trajectory file made readable, step by step, then the outcome and the figures. */
import { readFile } from "node:fs/promises";
import type { Trajectory, TrajectoryInfo } from "../../src/shared/contracts.js";
import { ConfigError } from "../../src/shared/errors.js";

export async function readTrajectory(path: string): Promise<Trajectory> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new ConfigError(`cannot read trajectory ${path}: ${(error as Error).message}`, {
      code: "trajectory_unreadable",
      hint: "Pass a .traj file written by agent-fix run.",
    });
  }
  const value = data as Partial<Trajectory>;
  if (!Array.isArray(value.trajectory) || typeof value.info !== "object" || value.info === null) {
    throw new ConfigError(`${path} is not a trajectory: it lacks trajectory[] or info`, {
      code: "trajectory_invalid",
      hint: "Pass a .traj file written by agent-fix run.",
    });
  }
  return value as Trajectory;
}

function indent(text: string, maxLines: number): string {
  const lines = text.replace(/\s+$/, "").split("\n");
  const shown = maxLines > 0 && lines.length > maxLines ? lines.slice(0, maxLines) : lines;
  const more = lines.length - shown.length;
  return [
    ...shown.map((line) => `    ${line}`),
    ...(more > 0 ? [`    ... (${more} more lines; --full shows all)`] : []),
  ].join("\n");
}

export function formatTrajectory(
  trajectory: Trajectory,
  options: { maxObservationLines?: number } = {},
): string {
  const maxLines = options.maxObservationLines ?? 30;
  const out: string[] = [];
  trajectory.trajectory.forEach((step, index) => {
    out.push(`=== step ${index + 1} ===`);
    if (step.thought?.trim()) out.push("THOUGHT", indent(step.thought, 0));
    out.push("ACTION", indent(step.action || "(no valid action)", 0));
    out.push("OBSERVATION", indent(step.observation ?? "", maxLines));
    // Optional chaining: trajectories written by SWE-agent itself lack some of our fields.
    out.push(
      `(${(step.execution_time ?? 0).toFixed(2)} s, ${step.tokens?.sent ?? "?"} tokens sent, ${step.tokens?.received ?? "?"} received; open file ${step.state?.open_file ?? "n/a"}, directory ${step.state?.working_dir ?? "?"})`,
      "",
    );
  });
  const { info } = trajectory;
  const stats = info.model_stats ?? { tokens_sent: 0, tokens_received: 0, api_calls: 0, instance_cost: 0 };
  out.push("=== outcome ===");
  out.push(
    `exit status   ${info.exit_status ?? "(unfinished: the run stopped before it recorded an outcome)"}`,
  );
  if (typeof info.error === "string") out.push(`error         ${info.error}`);
  const patch = info.submission ?? "";
  const files = [...patch.matchAll(/^diff --git a\/\S+ b\/(\S+)/gm)].map((match) => match[1]);
  out.push(
    `submission    ${patch.trim() ? `${files.length} file(s): ${files.join(", ")}` : info.submission === null ? "none" : "empty (no changes)"}`,
  );
  for (const gate of info.gate ?? []) {
    out.push(
      `gate #${gate.attempt}       ${gate.passed ? "passed" : "failed"} in ${(gate.durationMs / 1000).toFixed(1)} s`,
    );
  }
  out.push(
    `model         ${info.model}`,
    `steps         ${trajectory.trajectory.length} (${stats.api_calls} API calls)`,
    `tokens        ${stats.tokens_sent} sent, ${stats.tokens_received} received`,
    `cost          $${stats.instance_cost.toFixed(4)}${typeof info.cost_note === "string" ? ` (${info.cost_note})` : ""}`,
    `tools         ${info.tool_bundle} (ACI ${info.aci_version}), ${String(info.action_format ?? "")}`,
    `sandbox       ${sandboxLine(info)}`,
    `config hash   ${info.config_hash}`,
    `time          ${info.started_at} to ${info.finished_at ?? "?"}`,
  );
  if (patch.trim()) out.push("", "=== patch ===", patch.trimEnd());
  return out.join("\n");
}

/** The image the run came from (with its id), and the kept environment it started from. */
function sandboxLine(info: TrajectoryInfo): string {
  const id = info.sandbox_image_id ? ` (${info.sandbox_image_id.slice(0, 19)})` : "";
  const kept = info.kept_environment;
  return `${info.sandbox_image}${id}${kept ? `, kept environment prepared at ${kept.prepared_at}` : ""}`;
}
