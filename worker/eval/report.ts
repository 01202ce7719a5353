/** report.md: one row per variant, the shape of the SWE-agent paper's ablation table. */
import type { InstanceResult } from "./results.js";

const mean = (values: readonly number[]) =>
  values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;

/** "submitted 2, exit_step_limit 1", most frequent first. */
function exitStatuses(results: readonly InstanceResult[]): string {
  const counts = new Map<string, number>();
  for (const result of results) counts.set(result.exit_status, (counts.get(result.exit_status) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([status, count]) => `${status} ${count}`)
    .join(", ");
}

function outcome(result: InstanceResult): string {
  if (result.exit_status === "error") return `error: ${(result.error ?? "unknown").split("\n")[0]}`;
  const grade = result.grade;
  if (!grade) return "not graded";
  if ("error" in grade) return grade.error.replaceAll("_", " ");
  if (grade.resolved) return "resolved";
  const failed = [
    ...grade.FAIL_TO_PASS.failed.map((id) => `FAIL_TO_PASS ${id}`),
    ...grade.PASS_TO_PASS.failed.map((id) => `PASS_TO_PASS ${id}`),
  ];
  return `failed: ${failed.join(", ")}`;
}

export function renderReport(
  model: string,
  variants: readonly string[],
  instances: number,
  results: readonly InstanceResult[],
): string {
  const lines = [
    `# agent-fix eval: ${model}`,
    "",
    `${instances} instance(s) per variant. Resolved as in SWE-bench: every FAIL_TO_PASS and PASS_TO_PASS test passes.`,
    "",
    "| variant | instances | resolved | resolved % | mean cost ($) | mean steps | exit statuses |",
    "| ------- | --------- | -------- | ---------- | ------------- | ---------- | ------------- |",
  ];
  for (const variant of variants) {
    const rows = results.filter((result) => result.variant === variant);
    const resolved = rows.filter((result) => result.resolved).length;
    const percent = instances === 0 ? 0 : (100 * resolved) / instances;
    lines.push(
      `| ${variant} | ${rows.length}/${instances} | ${resolved} | ${percent.toFixed(1)} | ${mean(rows.map((r) => r.cost_usd)).toFixed(4)} | ${mean(rows.map((r) => r.steps)).toFixed(1)} | ${exitStatuses(rows)} |`,
    );
  }
  lines.push(
    "",
    "## Instances",
    "",
    "| variant | instance | outcome | exit status | steps | cost ($) | wall time (s) |",
  );
  lines.push("| ------- | -------- | ------- | ----------- | ----- | -------- | ------------- |");
  const ordered = [...results].sort(
    (a, b) =>
      variants.indexOf(a.variant) - variants.indexOf(b.variant) || a.instance_id.localeCompare(b.instance_id),
  );
  for (const result of ordered) {
    lines.push(
      `| ${result.variant} | ${result.instance_id} | ${outcome(result).replaceAll("|", "\\|")} | ${result.exit_status} | ${result.steps} | ${result.cost_usd.toFixed(4)} | ${result.wall_time_s.toFixed(1)} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}
