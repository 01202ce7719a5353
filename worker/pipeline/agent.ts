import type { Gate, Sandbox, Trajectory, TrajectoryStep } from "../../src/contracts.js";

export interface AgentStepEvent {
  /** 1-based step number. */
  step: number;
  entry: TrajectoryStep;
}

export interface AgentRunInput {
  sandbox: Sandbox;
  /** The issue as the agent reads it: title, then body. */
  problemStatement: string;
  gate: Gate;
  onStep: (event: AgentStepEvent) => void;
  signal: AbortSignal;
}

/** The agent loop of worker/agent/ as the pipeline sees it; the processor binds model and config. */
export type AgentRunner = (input: AgentRunInput) => Promise<Trajectory>;

/** Step 6: what the issue says, in the form the agent's first prompt takes. */
export function problemStatement(issue: { number: number; title: string; body: string | null }): string {
  return `Issue #${issue.number}: ${issue.title}\n\n${(issue.body ?? "").trim()}`.trim();
}

/** A run ends well only with a submission the gate accepted (the gate's last record passed). */
export function gatePassed(trajectory: Trajectory): boolean {
  const last = trajectory.info.gate.at(-1);
  return Boolean(trajectory.info.submission?.trim()) && last?.passed === true;
}
