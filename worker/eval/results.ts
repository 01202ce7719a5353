/**
 * What `agent-fix eval` writes to its output directory: results.json (one record per variant and
 * instance, rewritten after each one finishes, which is what a second invocation resumes from) and
 * SWE-bench's predictions files, so its official harness can grade the same run.
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../../src/shared/errors.js";
import type { Grade } from "./grade.js";

export interface InstanceResult {
  instance_id: string;
  variant: string;
  model: string;
  resolved: boolean;
  /** The loop's exit status, or "error" when the run itself failed (re-run on resume). */
  exit_status: string;
  error?: string | undefined;
  steps: number;
  tokens: { sent: number; received: number };
  cost_usd: number;
  wall_time_s: number;
  patch: string;
  /** The gate's tests on the unchanged code (null when the run failed before them). */
  baseline_passed: boolean | null;
  /** Why the app would have opened no pull request; null when the gate accepted the change. */
  no_pull_request_reason: string | null;
  grade: Grade | null;
  trajectory: string | null;
  finished_at: string;
}

interface ResultsFile {
  results: InstanceResult[];
}

export const resultKey = (result: { variant: string; instance_id: string }) =>
  `${result.variant}\u0000${result.instance_id}`;

export async function readResults(out: string): Promise<InstanceResult[]> {
  const path = join(out, "results.json");
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as ResultsFile;
    if (!Array.isArray(parsed.results)) throw new Error("no results array");
    return parsed.results;
  } catch (error) {
    throw new ConfigError(`${path} is not a results file of agent-fix eval: ${(error as Error).message}`, {
      code: "eval_results_invalid",
      hint: "Pass another --out directory, or remove the file to start over.",
    });
  }
}

/** Written whole to a temporary file then renamed: an interrupted run never leaves half a file. */
async function writeAtomically(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text, "utf8");
  await rename(`${path}.tmp`, path);
}

export async function writeResults(out: string, results: readonly InstanceResult[]): Promise<void> {
  const file: ResultsFile = { results: [...results] };
  await writeAtomically(join(out, "results.json"), `${JSON.stringify(file, null, 2)}\n`);
}

/** predictions.jsonl for the default variant, predictions-NAME.jsonl for each other one. */
function predictionsFile(variant: string): string {
  return variant === "default" ? "predictions.jsonl" : `predictions-${variant}.jsonl`;
}

export async function writePredictions(
  out: string,
  variant: string,
  results: readonly InstanceResult[],
): Promise<void> {
  const lines = results
    .filter((result) => result.variant === variant && result.exit_status !== "error")
    .map((result) =>
      JSON.stringify({
        instance_id: result.instance_id,
        model_name_or_path: variant === "default" ? result.model : `${result.model}+${variant}`,
        model_patch: result.patch,
      }),
    );
  await writeAtomically(join(out, predictionsFile(variant)), lines.map((line) => `${line}\n`).join(""));
}
