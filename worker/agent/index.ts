/** The agent loop and its parts, as the run (worker/run/) and the CLI use them. */

export type { PullRequestTemplate } from "./conversation.js";
export { type RunAgentOptions, runAgent } from "./run.js";
