/**
 * `submit` as the agent gets it, and the gate that runs after it.
 * - The tool, in the manner of SWE-agent's `review_on_submit_m` bundle: a submit with no change submits
 *   nothing and says so (a run never ends as submitted with an empty patch); with the review on, the
 *   first submit that has a change shows the diff and a checklist and submits nothing; the next submits.
 * - The gate, a hook after a submit: the repository's tests on the change decide whether the loop ends.
 */

import type { Environment, Gate, GateRecord, ToolResult } from "../../src/contracts.js";
import type { AgentConfig } from "../config/agent.js";
import { reviewText } from "./conversation.js";
import { cutMiddle, renderTemplate } from "./prompts.js";
import { groupFailures } from "./test-failures.js";

const nothingToSubmit =
  "Nothing was submitted (no changes: the repository's files are the same as the commit you started from). Change the files to resolve the issue, then call submit again.";

const stateLines = /\n\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)$/;

/** The environment with `submit` behaving as described above; every other tool is the environment's. */
export function withSubmitBehaviour(env: Environment, config: AgentConfig): Environment {
  let reviewed = !config.reviewOnSubmit;
  const submit = async (args: unknown, signal?: AbortSignal): Promise<ToolResult> => {
    const result = await env.execute("submit", args, signal);
    if (result.submission === undefined) return result;
    // Every observation ends with the state lines (open file, directory); these replace submit's own
    // text, so they keep its state lines (issue 24: the review had none).
    const state = stateLines.exec(result.observation)?.[0] ?? "";
    if (result.submission.trim() === "") return { observation: `${nothingToSubmit}${state}` };
    if (reviewed) return result;
    reviewed = true;
    return { observation: `${reviewText(config, result.submission)}${state}` };
  };
  return {
    bundle: env.bundle,
    version: env.version,
    tools: env.tools,
    functionSpecs: () => env.functionSpecs(),
    docs: () => env.docs(),
    state: () => env.state(),
    diff: () => env.diff(),
    execute: (name, args, signal) =>
      name === "submit" ? submit(args, signal) : env.execute(name, args, signal),
  };
}

/** What the gate says about a submission. */
type SubmitVerdict =
  /** The loop ends submitted; `submission` is the change as the gate tested it. */
  | { kind: "accepted"; submission: string }
  /** The model is told why and goes on working. */
  | { kind: "not_accepted"; feedback: string }
  /** The last attempt failed too: the loop ends with the change it tested. */
  | { kind: "attempts_used"; submission: string };

export type SubmitHook = (submission: string, signal?: AbortSignal) => Promise<SubmitVerdict>;

/** The gate as a hook after submit; each run is recorded in `records` (the trajectory's info.gate). */
export function gateHook(gate: Gate | undefined, config: AgentConfig, records: GateRecord[]): SubmitHook {
  return async (submission, signal) => {
    if (!gate || submission.trim() === "") return { kind: "accepted", submission };
    const began = Date.now();
    const result = await gate(submission, signal);
    if (result.untested) return { kind: "not_accepted", feedback: result.output };
    records.push({
      attempt: records.length + 1,
      passed: result.passed,
      output: cutMiddle(result.output, 20_000),
      durationMs: Date.now() - began,
    });
    // The gate's own account of the change (computed outside the agent's reach) is the one recorded.
    const tested = result.submission ?? submission;
    if (result.passed) return { kind: "accepted", submission: tested };
    if (records.length >= config.gate.maxAttempts) return { kind: "attempts_used", submission: tested };
    const feedback = renderTemplate(config.prompts.gateFailed, {
      output: cutMiddle(groupFailures(result.output), config.gate.outputMaxChars),
      attempt: records.length,
      max_attempts: config.gate.maxAttempts,
    });
    return { kind: "not_accepted", feedback };
  };
}
