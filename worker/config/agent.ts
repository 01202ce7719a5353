/**
 * Schema of the `agent:` section of config/default.yaml: action format, limits, history, gate,
 * review, loop warnings and the prompt templates. Templates use `{{name}}` placeholders; a placeholder
 * a template does not offer is a config error naming the key, found when the file is loaded.
 */
import { z } from "zod";

/** Placeholders each template may use (the loop fills exactly these). */
const templateVariables = {
  /** interface_summary and bundle_tips: what the tool bundle offers and how to use it, in its tools' names. */
  system: ["tool_docs", "action_format_instructions", "interface_summary", "bundle_tips", "reproduce_tip"],
  demonstration: [],
  /** description_request: with the review off, the request for the pull request's description (below). */
  instance: [
    "issue_title",
    "issue_body",
    "repo_name",
    "test_command",
    "test_command_note",
    "description_request",
  ],
  nextStep: ["observation", "open_file", "working_dir"],
  formatError: ["error", "valid_form"],
  review: ["diff", "new_files", "description_request"],
  /** where: how the description is given in the action format (an argument, or the reply's text). */
  description: ["where", "parts"],
  descriptionParts: [],
  /** A repository's pull request template: its path and text, bounded. */
  descriptionTemplate: ["path", "template"],
  gateFailed: ["output", "attempt", "max_attempts"],
} as const;

/** A template's schema, described as `what` and the placeholders it offers. */
function template(key: keyof typeof templateVariables, what: string) {
  const allowed: readonly string[] = templateVariables[key];
  const offers = allowed.length ? ` Placeholders: ${allowed.map((v) => `{{${v}}}`).join(", ")}.` : "";
  return z
    .string()
    .superRefine((text, ctx) => {
      for (const match of text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)) {
        const name = match[1]!;
        if (!allowed.includes(name)) {
          ctx.addIssue({
            code: "custom",
            message: `unknown placeholder {{${name}}}; this template offers ${allowed.length ? allowed.map((v) => `{{${v}}}`).join(", ") : "none"}`,
          });
        }
      }
    })
    .describe(`${what}${offers}`);
}

export const historyProcessors = ["full", "last_n", "block"] as const;
export type HistoryProcessorName = (typeof historyProcessors)[number];

export const agentConfigSchema = z
  .strictObject({
    actionFormat: z
      .enum(["function_calling", "thought_action"])
      .default("function_calling")
      .describe(
        "`function_calling`: the tools are sent as functions; `thought_action`: one fenced command per reply, for models without tool calling.",
      ),
    limits: z
      .strictObject({
        maxSteps: z.number().int().positive().default(50).describe("Agent steps of one run at most."),
        maxCostUsd: z
          .number()
          .positive()
          .default(3)
          .describe("Model cost of one run at most, in US dollars."),
        maxWallTimeSeconds: z.number().positive().default(1800).describe("Wall time of the agent at most."),
        maxContextTokens: z
          .number()
          .int()
          .positive()
          .default(120_000)
          .describe("Estimated prompt tokens of the next request (characters / 4) at most."),
      })
      .prefault({})
      .describe(
        "The limits of a run where the repository sets none (its own stay under `repository.ceilings`).",
      ),
    history: z
      .strictObject({
        processor: z
          .enum(historyProcessors)
          .default("block")
          .describe(
            "How old observations are shortened: `full` keeps all, `last_n` keeps the last `keepLast`, `block` collapses them in blocks (chosen by npm run bench:history).",
          ),
        keepLast: z
          .number()
          .int()
          .min(0)
          .default(5)
          .describe("Observations kept whole at the end of the history."),
        blockSize: z
          .number()
          .int()
          .positive()
          .default(10)
          .describe(
            "`block`: older observations are collapsed this many at a time, so the prompt prefix stays put.",
          ),
        budgetTokens: z
          .number()
          .int()
          .min(0)
          .default(12_000)
          .describe("`block`: estimated tokens the observations may hold before the oldest collapse."),
        shortOutputLines: z
          .number()
          .int()
          .min(0)
          .default(8)
          .describe("Outputs of at most this many lines are never collapsed."),
      })
      .prefault({})
      .describe("What of the earlier steps the model sees again."),
    maxFormatErrors: z
      .number()
      .int()
      .positive()
      .default(3)
      .describe("Replies in a row that cannot be run (format errors) end the run with exit_format."),
    gate: z
      .strictObject({
        maxAttempts: z
          .number()
          .int()
          .positive()
          .default(3)
          .describe("Submits the repository's tests may refuse before the run ends."),
        outputMaxChars: z
          .number()
          .int()
          .positive()
          .default(8000)
          .describe(
            "The gate's output is cut to this many characters (head and tail) before the model sees it.",
          ),
      })
      .prefault({})
      .describe("The tests run on each submit: a change they fail goes back to the agent."),
    reviewOnSubmit: z
      .boolean()
      .default(true)
      .describe("The first submit answers with the diff and a checklist; a second submit confirms."),
    loopWarnings: z
      .strictObject({
        repeatedAction: z
          .number()
          .int()
          .min(2)
          .default(3)
          .describe("The same action this many times in a row gets a warning."),
        scrolls: z
          .number()
          .int()
          .min(2)
          .default(4)
          .describe("This many scrolls in a row suggest goto or search_file."),
      })
      .prefault({})
      .describe("Warnings to an agent going in circles."),
    issue: z
      .strictObject({
        maxBodyChars: z
          .number()
          .int()
          .positive()
          .default(20_000)
          .describe("Longer issue bodies are cut with a note."),
      })
      .prefault({})
      .describe("How the issue is shown to the model."),
    demonstrationFile: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "A trajectory (.traj) shown before the issue as a worked example, rendered into prompts.demonstration; a relative path is read from the directory of the config file that names it. null: none.",
      ),
    prompts: z
      .strictObject({
        system: template(
          "system",
          "The system prompt: the interface, the tools' documentation and the action format. {{tool_docs}} is empty with function calling (the definitions go with the request), else a COMMANDS: section ending with an empty line.",
        ),
        demonstration: template(
          "demonstration",
          "A whole example trajectory shown before the issue (set by demonstrationFile); null for none.",
        )
          .nullable()
          .default(null),
        instance: template("instance", "The first user message: the issue and what to do."),
        nextStep: template("nextStep", "Each tool result."),
        formatError: template("formatError", "The answer to a reply that cannot be run."),
        review: template("review", "The answer to the first submit when reviewOnSubmit is on."),
        description: template(
          "description",
          "The request for the pull request's description, in the review (or the instance prompt with the review off): {{parts}} is descriptionParts, or descriptionTemplate when the repository has a pull request template; {{where}} says how to give it.",
        ),
        descriptionParts: template("descriptionParts", "The parts the description should have."),
        descriptionTemplate: template(
          "descriptionTemplate",
          "How to fill the repository's pull request template.",
        ),
        gateFailed: template("gateFailed", "The answer to a submit the tests refused."),
      })
      .describe(
        "The prompt templates; `{{name}}` placeholders are filled by the loop, and one a template does not offer is a config error.",
      ),
  })
  .describe(
    "The agent's loop: action format, limits, history, the gate on each submit, the review and the prompt templates (worker/agent/).",
  );
export type AgentConfig = z.infer<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;
