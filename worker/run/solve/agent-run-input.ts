import type { Gate, Sandbox, Trajectory, TrajectoryStep } from "../../../src/shared/contracts.js";

interface AgentStepEvent {
  /** 1-based step number. */
  step: number;
  entry: TrajectoryStep;
}

export interface AgentRunInput {
  sandbox: Sandbox;
  issue: { number: number; title: string; body: string };
  /** `owner/name`, for the agent's first prompt. */
  repoName: string;
  gate: Gate;
  onStep: (event: AgentStepEvent) => void;
  signal: AbortSignal;
  /** The commit the repository was copied into the sandbox at (the ACI's base, read back to check). */
  baseCommit?: string | undefined;
}

/** The agent loop of worker/agent/ as the pipeline sees it; the processor binds model and config. */
export type AgentRunner = (input: AgentRunInput) => Promise<Trajectory>;

/** A run ends well only with a submission the gate accepted (the gate's last record passed). */
export function gatePassed(trajectory: Trajectory): boolean {
  const last = trajectory.info.gate.at(-1);
  return Boolean(trajectory.info.submission?.trim()) && last?.passed === true;
}
