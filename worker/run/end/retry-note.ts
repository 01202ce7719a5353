import { type AgentFixError, InfrastructureError } from "../../../src/shared/errors.js";

/**
 * The status note of a run about to be retried: the engine named when it was the engine, with the
 * attempt the retry will be, so a maintainer sees neither a sandbox code nor the repository blamed.
 */
export function retryNote(error: AgentFixError, attempt: { next: number; of: number }): string {
  const retrying = `retrying (attempt ${attempt.next} of ${attempt.of})`;
  if (error instanceof InfrastructureError)
    return `${error.message}; ${retrying} (${error.code}).${error.hint ? ` ${error.hint}` : ""}`;
  return `Retrying after a transient error: ${error.describe()}`;
}
