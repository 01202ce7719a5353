/**
 * A recorded trajectory as a demonstration for the prompt (SWE-agent's wording): each step's thought,
 * its action written as a text-mode command, and the observation, so the model sees the interface used well.
 */
import type { Trajectory } from "../../src/shared/contracts.js";

export function renderDemonstration(trajectory: Trajectory): string {
  const steps = trajectory.trajectory
    .filter((step) => step.action !== "")
    .map(
      (step) =>
        `${step.thought.trim()}\n\n\`\`\`\n${step.action}\n\`\`\`\n\nOBSERVATION:\n${step.observation.trim()}`,
    );
  return [
    "Here is a demonstration of how to correctly accomplish this task.",
    "It is included to show you how to correctly use the interface.",
    "You do not need to follow exactly what is done in the demonstration.",
    "--- DEMONSTRATION ---",
    steps.join("\n\n"),
    "--- END OF DEMONSTRATION ---",
  ].join("\n");
}
