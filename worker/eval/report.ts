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

/** A Markdown table with its columns padded to one width, as a formatter would leave it. */
function table(header: readonly string[], rows: readonly string[][]): string[] {
  const escaped = rows.map((row) => row.map((cell) => cell.replaceAll("|", "\\|")));
  const widths = header.map((title, i) => Math.max(title.length, ...escaped.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...escaped.map(line)];
}

export function renderReport(
  model: string,
  variants: readonly string[],
  instances: number,
  results: readonly InstanceResult[],
): string {
  const summary = variants.map((variant) => {
    const rows = results.filter((result) => result.variant === variant);
    const resolved = rows.filter((result) => result.resolved).length;
    const percent = instances === 0 ? 0 : (100 * resolved) / instances;
    return [
      variant,
      `${rows.length}/${instances}`,
      String(resolved),
      percent.toFixed(1),
      mean(rows.map((row) => row.cost_usd)).toFixed(4),
      mean(rows.map((row) => row.steps)).toFixed(1),
      exitStatuses(rows),
    ];
  });
  const ordered = [...results].sort(
    (a, b) =>
      variants.indexOf(a.variant) - variants.indexOf(b.variant) || a.instance_id.localeCompare(b.instance_id),
  );
  const perInstance = ordered.map((result) => [
    result.variant,
    result.instance_id,
    outcome(result),
    result.exit_status,
    String(result.steps),
    result.cost_usd.toFixed(4),
    result.wall_time_s.toFixed(1),
  ]);
  return [
    `# agent-fix eval: ${model}`,
    "",
    `${instances} instance(s) per variant. Resolved as in SWE-bench: every FAIL_TO_PASS and PASS_TO_PASS test passes.`,
    "",
    ...table(
      ["variant", "instances", "resolved", "resolved %", "mean cost ($)", "mean steps", "exit statuses"],
      summary,
    ),
    "",
    "## Instances",
    "",
    ...table(
      ["variant", "instance", "outcome", "exit status", "steps", "cost ($)", "wall time (s)"],
      perInstance,
    ),
    "",
  ].join("\n");
}
