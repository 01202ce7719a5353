/**
 * `agent-fix eval-replays RUN_DIR --out REPLAY_DIR`: a finished evaluation's trajectories as a replay
 * directory (REPLAY_DIR/INSTANCE_ID.jsonl, the model's replies in order), so that `agent-fix eval
 * --model replay:REPLAY_DIR` re-runs the same evaluation at no cost.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { AssistantMessage, Trajectory } from "../../src/shared/contracts.js";
import { ConfigError } from "../../src/shared/errors.js";
import { readTrajectory } from "../agent/inspect.js";
import { readResults } from "./results.js";

interface ExportOptions {
  runDir: string;
  out: string;
  /** The variant whose trajectories are exported. */
  variant: string;
}

interface ExportSummary {
  written: string[];
  /** Instances of the variant that failed with an error: they have no trajectory to replay. */
  skipped: string[];
}

export async function exportReplays(options: ExportOptions): Promise<ExportSummary> {
  const runDir = resolve(options.runDir);
  const results = (await readResults(runDir)).filter((result) => result.variant === options.variant);
  if (results.length === 0) {
    throw new ConfigError(`${runDir} holds no results of variant "${options.variant}"`, {
      code: "eval_replays_no_results",
      hint: "Pass the --out directory of a finished agent-fix eval, and --variant NAME for a variant's runs.",
    });
  }
  const out = resolve(options.out);
  await mkdir(out, { recursive: true });
  const summary: ExportSummary = { written: [], skipped: [] };
  for (const result of [...results].sort((a, b) => a.instance_id.localeCompare(b.instance_id))) {
    if (result.exit_status === "error") {
      summary.skipped.push(result.instance_id);
      continue;
    }
    // Found from the run directory, not the recorded absolute path: the directory may have moved.
    const name = `eval-${options.variant}-${result.instance_id}.traj`;
    const path = join(runDir, "trajectories", options.variant, name);
    const turns = modelTurns(await readTrajectory(path), path);
    const lines = turns.map((turn) => `${JSON.stringify(turn)}\n`).join("");
    await writeFile(join(out, `${result.instance_id}.jsonl`), lines, "utf8");
    summary.written.push(result.instance_id);
  }
  return summary;
}

/**
 * The replies in order: each step's recorded message; for a trajectory written before steps carried
 * it, the history's assistant turns, when none left the history (a format error that the model
 * recovered from does).
 */
function modelTurns(trajectory: Trajectory, path: string): AssistantMessage[] {
  const steps = trajectory.trajectory;
  const recorded = steps.flatMap((step) => (step.message ? [step.message] : []));
  if (recorded.length === steps.length) return recorded.map(replayTurn);
  const fromHistory = trajectory.history.filter(
    (message): message is AssistantMessage => message.role === "assistant",
  );
  if (fromHistory.length === steps.length) return fromHistory.map(replayTurn);
  throw new ConfigError(`${path}: the model's replies cannot be recovered (its steps do not record them)`, {
    code: "eval_replays_unrecoverable",
    hint: "Re-run the instance with this version of agent-fix eval, which records each reply.",
  });
}

/** Only what the replay model reads: content and tool calls. */
function replayTurn(message: AssistantMessage): AssistantMessage {
  const turn: AssistantMessage = { role: "assistant", content: message.content };
  if (message.tool_calls?.length) turn.tool_calls = message.tool_calls;
  return turn;
}
