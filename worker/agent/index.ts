/** The agent loop and its parts, as the pipeline (worker/pipeline/) and the CLI use them. */
export { type HistoryEntry, type HistoryOptions, processHistory } from "./history.js";
export { parseReply } from "./parse.js";
export { cleanIssueText, renderTemplate } from "./prompts.js";
export { type AgentStepEvent, type RunAgentOptions, runAgent } from "./run.js";
export { TrajectoryRecorder } from "./trajectory.js";
