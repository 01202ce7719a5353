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

function template(key: keyof typeof templateVariables) {
  const allowed: readonly string[] = templateVariables[key];
  return z.string().superRefine((text, ctx) => {
    for (const match of text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)) {
      const name = match[1]!;
      if (!allowed.includes(name)) {
        ctx.addIssue({
          code: "custom",
          message: `unknown placeholder {{${name}}}; this template offers ${allowed.length ? allowed.map((v) => `{{${v}}}`).join(", ") : "none"}`,
        });
      }
    }
  });
}

export const historyProcessors = ["full", "last_n", "block"] as const;
export type HistoryProcessorName = (typeof historyProcessors)[number];

export const agentConfigSchema = z.strictObject({
  /** `function_calling`: tools sent as functions. `thought_action`: one fenced command per reply. */
  actionFormat: z.enum(["function_calling", "thought_action"]).default("function_calling"),
  limits: z
    .strictObject({
      maxSteps: z.number().int().positive().default(50),
      maxCostUsd: z.number().positive().default(3),
      maxWallTimeSeconds: z.number().positive().default(1800),
      /** Estimated prompt tokens of the next request (characters / 4). */
      maxContextTokens: z.number().int().positive().default(120_000),
    })
    .prefault({}),
  history: z
    .strictObject({
      processor: z.enum(historyProcessors).default("block"),
      /** Observations kept whole at the end of the history. */
      keepLast: z.number().int().min(0).default(5),
      /** `block`: older observations are collapsed this many at a time, so the prompt prefix stays put. */
      blockSize: z.number().int().positive().default(10),
      /** `block`: estimated tokens the observations may hold before the oldest collapse (bench:history). */
      budgetTokens: z.number().int().min(0).default(12_000),
      /** Outputs of at most this many lines are never collapsed. */
      shortOutputLines: z.number().int().min(0).default(8),
    })
    .prefault({}),
  /** Format errors in a row that end the run with exit_format. */
  maxFormatErrors: z.number().int().positive().default(3),
  gate: z
    .strictObject({
      maxAttempts: z.number().int().positive().default(3),
      /** The gate's output is cut to this many characters (head and tail) before the model sees it. */
      outputMaxChars: z.number().int().positive().default(8000),
    })
    .prefault({}),
  /** The first submit answers with the diff and a checklist; a second submit confirms. */
  reviewOnSubmit: z.boolean().default(true),
  loopWarnings: z
    .strictObject({
      /** The same action this many times in a row gets a warning. */
      repeatedAction: z.number().int().min(2).default(3),
      /** This many scrolls in a row suggest goto or search_file. */
      scrolls: z.number().int().min(2).default(4),
    })
    .prefault({}),
  issue: z
    .strictObject({
      /** Longer issue bodies are cut with a note. */
      maxBodyChars: z.number().int().positive().default(20_000),
    })
    .prefault({}),
  /**
   * A trajectory (.traj) shown before the issue as a worked example, rendered into prompts.demonstration;
   * a relative path is read from the directory of the config file that names it. null: none.
   */
  demonstrationFile: z.string().min(1).nullable().default(null),
  prompts: z.strictObject({
    system: template("system"),
    /** A whole example trajectory shown before the issue; null for none. */
    demonstration: template("demonstration").nullable().default(null),
    instance: template("instance"),
    nextStep: template("nextStep"),
    formatError: template("formatError"),
    review: template("review"),
    /**
     * The request for the pull request's description, shown in the review (or, with the review off, in
     * the instance prompt): `parts` is descriptionParts, or descriptionTemplate when the repository has
     * a pull request template.
     */
    description: template("description"),
    descriptionParts: template("descriptionParts"),
    descriptionTemplate: template("descriptionTemplate"),
    gateFailed: template("gateFailed"),
  }),
});
export type AgentConfig = z.infer<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;
