/**
 * The messages of a run apart from the loop's control flow: the opening prompts (system with the tool
 * docs, the optional demonstration, the issue), one turn (the assistant's call and its observation), the
 * review shown on the first submit, and the raw text of a reply for the trajectory.
 */

import type {
  AssistantMessage,
  ChatMessage,
  Environment,
  FunctionSpec,
  Tool,
} from "../../src/shared/contracts.js";
import { argumentDocs } from "../aci/environment.js";
import type { AgentConfig } from "../config/agent.js";
import type { HistoryEntry } from "./history.js";
import { actionFormatInstructions, textSignature } from "./parse.js";
import { bundlePromptValues, cleanIssueText, renderTemplate } from "./prompts.js";
import { reproduceTip, type TestCommandSource, testCommandNote } from "./test-command.js";

/** A repository's pull request template (read on the host from its default branch), bounded. */
export interface PullRequestTemplate {
  /** Where it is in the repository, e.g. `.github/pull_request_template.md`. */
  path: string;
  text: string;
}

export function openingEntries(
  config: AgentConfig,
  env: Environment,
  issue: { title: string; body: string },
  repoName: string,
  tests: TestCommandSource = null,
  template?: PullRequestTemplate,
): HistoryEntry[] {
  const format = config.actionFormat;
  // With function calling the tool definitions, sent with every request, are the tools' only
  // documentation: neither the text syntax (issue 12) nor a second list of the calls (issue 27).
  const toolDocs =
    format === "function_calling"
      ? ""
      : `COMMANDS:\n${env.tools.map((tool) => textDocs(tool, config)).join("\n")}\n\n`;
  const system = renderTemplate(config.prompts.system, {
    tool_docs: toolDocs,
    action_format_instructions: actionFormatInstructions(format, env.tools),
    ...bundlePromptValues(env.bundle),
    // The tip on reproducing follows the repository's language, as its test command tells it.
    reproduce_tip: reproduceTip(tests),
  });
  const instance = renderTemplate(config.prompts.instance, {
    issue_title: cleanIssueText(issue.title, 500),
    issue_body: cleanIssueText(issue.body, config.issue.maxBodyChars),
    repo_name: repoName,
    test_command: tests?.command ?? "",
    test_command_note: testCommandNote(tests),
    // With the review on, the review asks for the description, when the model is about to give it.
    description_request: config.reviewOnSubmit ? "" : `\n${descriptionRequest(config, template)}`,
  }).replace(/\n$/, "");
  return [
    { kind: "system", message: { role: "system", content: system } },
    ...(config.prompts.demonstration
      ? [
          {
            kind: "demonstration" as const,
            message: { role: "user" as const, content: config.prompts.demonstration },
          },
        ]
      : []),
    { kind: "instance", message: { role: "user", content: instance } },
  ];
}

/** A tool's text-mode docs: its signature, what it does, and what each argument means. */
function textDocs(tool: Tool, config: AgentConfig): string {
  const description = toolDescription(tool, config).replace(/\n/g, "\n    ");
  return [textSignature(tool), `    ${description}`, ...argumentDocs(tool)].join("\n");
}

/** What `submit` really does in this loop: with the review on, the first call only shows the diff. */
const submitWithReview =
  "Submits your changes (the diff against the commit you started from, new files included). The first call only shows you the diff and a checklist to review; the second submits and ends the session, unless the repository's tests fail on the change: then you see their output and go on. A call with nothing changed submits nothing and is not the first.";

function toolDescription(tool: Tool, config: AgentConfig): string {
  if (tool.name === "submit" && config.reviewOnSubmit) return submitWithReview;
  if (config.actionFormat === "thought_action" && tool.multilineArg) {
    return `${tool.doc} The <${tool.multilineArg}> goes on the lines after the command line and is terminated by a line with only end_of_edit on it.`;
  }
  return tool.doc;
}

/** The function schemas sent with every request, with the descriptions of this loop. */
export function functionSpecs(env: Environment, config: AgentConfig): FunctionSpec[] {
  return env.functionSpecs().map((spec) => {
    const tool = env.tools.find((candidate) => candidate.name === spec.name);
    return tool ? { ...spec, description: toolDescription(tool, config) } : spec;
  });
}

/**
 * The assistant's turn (only its first call: that is the one that ran) and the answer to it: a tool
 * message for a function call, a user message otherwise.
 */
export function turnEntries(
  kind: "observation" | "format_error",
  reply: AssistantMessage,
  text: string,
): HistoryEntry[] {
  const call = reply.tool_calls?.[0];
  const assistant: AssistantMessage = call
    ? { role: "assistant", content: reply.content, tool_calls: [call] }
    : { role: "assistant", content: reply.content };
  const answer: ChatMessage = call
    ? { role: "tool", tool_call_id: call.id, content: text }
    : { role: "user", content: text };
  return [
    { kind: kind === "observation" ? "action" : "format_error", message: assistant },
    { kind, message: answer },
  ];
}

/** A path that looks like a test of the repository's suite (tests/, test_x.py, x_test.go, x.test.ts, x.spec.js). */
const testPath = /(^|\/)(tests?|specs?|__tests__)\/|(^|\/)test_[^/]*$|[._-](test|spec)\.[^/]+$/i;

/**
 * The checklist's note on the files a diff adds. A regression test the model added belongs in the
 * change, so the note never asks to remove tests (issue 24: with only a test added, it did).
 */
function newFilesNote(newFiles: string[]): string {
  const listed = `   Files your diff adds: ${newFiles.join(", ")}.`;
  if (newFiles.every((file) => testPath.test(file)))
    return `${listed} They look like tests: keep them if they belong to the repository's test suite.`;
  return `${listed} Remove any that only served to reproduce the problem; keep tests that belong to the repository's test suite.`;
}

/** How the description is given: an argument with function calls; text mode's reply text otherwise. */
const DESCRIPTION_WHERE = {
  function_calling: "Give it in submit's `description` argument.",
  thought_action:
    "Write it as the text of your reply before the submit command: that text is published as it is, so write nothing else there.",
} as const;

/**
 * The request for the pull request's description (issue 24: nothing the model saw said its thought
 * would be published): in fixed parts, or the repository's template to fill in.
 */
export function descriptionRequest(config: AgentConfig, template?: PullRequestTemplate): string {
  const { prompts } = config;
  const parts = template
    ? renderTemplate(prompts.descriptionTemplate, { path: template.path, template: template.text.trimEnd() })
    : prompts.descriptionParts;
  return renderTemplate(prompts.description, { where: DESCRIPTION_WHERE[config.actionFormat], parts });
}

/** The review shown on the first submit of a change: the checklist, the diff, and `request` at its end. */
export function reviewText(config: AgentConfig, diff: string, request: string): string {
  const newFiles = [...diff.matchAll(/^diff --git a\/\S+ b\/(\S+)\nnew file mode/gm)].map(
    (match) => match[1]!,
  );
  // No new files: the placeholder's line goes too, so the checklist has no empty item.
  const template = newFiles.length
    ? config.prompts.review
    : config.prompts.review.replace(/^[ \t]*\{\{new_files\}\}[ \t]*\n/m, "");
  return renderTemplate(template, {
    diff: diff.trim() === "" ? "(no changes: the working tree equals the starting commit)" : diff.trimEnd(),
    new_files: newFiles.length ? newFilesNote(newFiles) : "",
    description_request: request,
  });
}

export function responseText(message: AssistantMessage): string {
  const calls = message.tool_calls?.map((call) => `${call.function.name}(${call.function.arguments})`) ?? [];
  return [message.content ?? "", ...calls].filter((part) => part !== "").join("\n");
}
