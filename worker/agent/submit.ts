/**
 * `submit` as the agent gets it, and the gate that runs after it.
 * - The tool, in the manner of SWE-agent's `review_on_submit_m` bundle: a submit with no change submits
 *   nothing and says so (a run never ends as submitted with an empty patch); with the review on, the
 *   first submit that has a change shows the diff and a checklist and submits nothing; the next submits.
 * - The pull request's description, asked for explicitly and taken from the submit (SubmitDescription).
 * - The gate, a hook after a submit: the repository's tests on the change decide whether the loop ends.
 */

import { z } from "zod";
import type {
  Environment,
  FunctionSpec,
  Gate,
  GateRecord,
  Tool,
  ToolResult,
} from "../../src/shared/contracts.js";
import type { AgentConfig } from "../config/agent.js";
import { descriptionRequest, type PullRequestTemplate, reviewText } from "./conversation.js";
import { cutMiddle, renderTemplate } from "./prompts.js";
import { groupFailures } from "./test-failures.js";

const nothingToSubmit =
  "Nothing was submitted (no changes: the repository's files are the same as the commit you started from). Change the files to resolve the issue, then call submit again.";

const stateLines = /\n\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)$/;

/** What the model is told of submit's `description` argument (function calling only). */
const DESCRIPTION_ARGUMENT =
  "the pull request's description, published as written, for the maintainers: what was wrong, what changed, how it was checked";

/**
 * The pull request's description the model gives (issue 24: the confirming submit's thought was
 * published, though nothing the model saw said so, and it was its reply to the checklist). With
 * function calls it is submit's `description` argument, the latest one given. In text mode, where an
 * argument cannot hold a fenced block, it is the text before the command of the first submit of a
 * change after the model was asked: in the review, or with the review off in the instance prompt. A
 * thought no request preceded is never taken.
 */
export class SubmitDescription {
  private asked: boolean;
  private text: string | null = null;

  constructor(
    private readonly format: AgentConfig["actionFormat"],
    reviewOnSubmit: boolean,
  ) {
    this.asked = !reviewOnSubmit;
  }

  /** The review, which ends with the request, was shown. */
  requested(): void {
    this.asked = true;
  }

  /** A submit call; `submitted`: it submitted a change (not the review, not an empty submit). */
  observe(args: Record<string, unknown>, thought: string, submitted: boolean): string | null {
    if (this.format === "function_calling") {
      const given = typeof args.description === "string" ? args.description.trim() : "";
      if (given !== "") this.text = given;
    } else if (submitted && this.asked && this.text === null) {
      // The format's example starts the reasoning with a DISCUSSION line: not part of the description.
      const given = thought.replace(/^\s*DISCUSSION[ \t]*\n/, "").trim();
      if (given !== "") this.text = given;
    }
    return this.text;
  }
}

/** What withSubmitBehaviour needs beside the environment and the config. */
interface SubmitOptions {
  description: SubmitDescription;
  /** The repository's pull request template, to be filled in as the description. */
  template?: PullRequestTemplate | undefined;
}

/** The environment with `submit` behaving as described above; every other tool is the environment's. */
export function withSubmitBehaviour(
  env: Environment,
  config: AgentConfig,
  options: SubmitOptions,
): Environment {
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
    options.description.requested();
    const request = descriptionRequest(config, options.template);
    return { observation: `${reviewText(config, result.submission, request)}${state}` };
  };
  const withArgument = config.actionFormat === "function_calling";
  const tools = withArgument ? env.tools.map(withDescriptionArgument) : env.tools;
  return {
    bundle: env.bundle,
    version: env.version,
    tools,
    functionSpecs: () => (withArgument ? env.functionSpecs().map(withDescriptionSpec) : env.functionSpecs()),
    docs: () => env.docs(),
    state: () => env.state(),
    diff: () => env.diff(),
    // The ACI's submit takes no argument: the description is the loop's (SubmitDescription).
    execute: (name, args, signal) =>
      name === "submit" ? submit(withoutDescription(args), signal) : env.execute(name, args, signal),
  };
}

function withDescriptionArgument(tool: Tool): Tool {
  if (tool.name !== "submit") return tool;
  return {
    ...tool,
    parameters: tool.parameters.extend({ description: z.string().describe(DESCRIPTION_ARGUMENT).optional() }),
  };
}

function withDescriptionSpec(spec: FunctionSpec): FunctionSpec {
  if (spec.name !== "submit") return spec;
  const parameters = spec.parameters as { properties?: Record<string, unknown> };
  return {
    ...spec,
    parameters: {
      ...spec.parameters,
      properties: {
        ...parameters.properties,
        description: { type: "string", description: DESCRIPTION_ARGUMENT },
      },
    },
  };
}

function withoutDescription(args: unknown): unknown {
  if (!args || typeof args !== "object" || Array.isArray(args)) return args;
  const { description: _given, ...rest } = args as Record<string, unknown>;
  return rest;
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
