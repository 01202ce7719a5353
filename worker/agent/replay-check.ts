/**
 * `agent-fix replay`: re-runs a trajectory's recorded actions against a repository and reports where the
 * observations now differ, for checking a change to the ACI. Steps without a valid action, format
 * errors and submits (the loop answers those, not the tool) are skipped.
 */
import type { Environment, Trajectory } from "../../src/shared/contracts.js";

interface ReplayDifference {
  step: number;
  action: string;
  recorded: string;
  now: string;
  /** 1-based line of the first difference. */
  line: number;
}

interface ReplayReport {
  replayed: number;
  skipped: number;
  differences: ReplayDifference[];
}

/** Notes the loop appends to observations; they are not the tool's output. */
function toolOutput(observation: string): string {
  return observation
    .split("\n")
    .filter((line) => !/^(WARNING: |Note: your reply had )/.test(line))
    .join("\n")
    .trimEnd();
}

export async function replayActions(
  trajectory: Trajectory,
  environment: Environment,
  options: { recordedWorkdir?: string; workdir?: string; signal?: AbortSignal } = {},
): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: 0, skipped: 0, differences: [] };
  const normalise = (text: string) =>
    options.recordedWorkdir && options.workdir
      ? text.split(options.recordedWorkdir).join(options.workdir)
      : text;
  for (const [index, step] of trajectory.trajectory.entries()) {
    if (!step.tool || step.args === null || step.tool === "submit") {
      report.skipped++;
      continue;
    }
    const result = await environment.execute(step.tool, step.args, options.signal);
    if (result.formatError) {
      report.skipped++;
      continue;
    }
    report.replayed++;
    const recorded = toolOutput(normalise(step.observation));
    const now = toolOutput(result.observation);
    if (recorded === now) continue;
    const a = recorded.split("\n");
    const b = now.split("\n");
    let line = 0;
    while (line < a.length && line < b.length && a[line] === b[line]) line++;
    report.differences.push({ step: index + 1, action: step.action, recorded, now, line: line + 1 });
  }
  return report;
}

export function formatReplayReport(report: ReplayReport): string {
  const out: string[] = [];
  for (const difference of report.differences) {
    const at = (text: string) => text.split("\n")[difference.line - 1] ?? "(end of output)";
    out.push(
      `step ${difference.step} differs at line ${difference.line}: ${difference.action.split("\n")[0]}`,
      `  recorded: ${at(difference.recorded)}`,
      `  now:      ${at(difference.now)}`,
    );
  }
  out.push(
    `${report.replayed} action(s) replayed, ${report.skipped} skipped, ${report.differences.length} with different observations`,
  );
  return out.join("\n");
}
