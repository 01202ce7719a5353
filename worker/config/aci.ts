/**
 * Schema of the `aci:` section of config/default.yaml: which tool bundle the agent gets and the limits
 * of what the tools show. `aciConfigSchema.parse({})` yields the defaults of the SWE-agent paper.
 */
import { z } from "zod";

export const toolBundles = ["aci", "editor", "shell"] as const;
export type ToolBundleName = (typeof toolBundles)[number];

export const aciConfigSchema = z
  .strictObject({
    bundle: z
      .enum(toolBundles)
      .default("aci")
      .describe(
        "The tool bundle: `aci` (the SWE-agent paper's viewer and line edits), `editor` (str_replace style), `shell` (bash and submit only).",
      ),
    window: z.number().int().min(10).max(1000).default(100).describe("Lines shown by the file viewer."),
    scrollOverlap: z.number().int().min(0).max(50).default(2).describe("Lines kept in view when scrolling."),
    searchCap: z
      .number()
      .int()
      .positive()
      .default(50)
      .describe("Files or lines past which a search must narrow."),
    outputMaxLines: z
      .number()
      .int()
      .min(10)
      .default(400)
      .describe("Longer command output is cut in the middle."),
    outputMaxChars: z
      .number()
      .int()
      .min(500)
      .default(20_000)
      .describe("Output cap in characters, head and tail kept."),
    lineMaxChars: z
      .number()
      .int()
      .min(80)
      .default(2000)
      .describe("One longer output line is cut in the middle."),
    commandTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(120_000)
      .describe("bash commands are killed after this."),
    toolTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(60_000)
      .describe("Search, git and file tools time out after this."),
    maxFileBytes: z
      .number()
      .int()
      .positive()
      .default(2_000_000)
      .describe("Larger files cannot be opened or edited."),
    lint: z.boolean().default(true).describe("Reject edits that introduce syntax errors."),
  })
  .describe(
    "The Agent-Computer Interface: which tool bundle the agent gets and the limits of what the tools show (worker/aci/).",
  );

export type AciConfig = z.infer<typeof aciConfigSchema>;
export type AciConfigInput = z.input<typeof aciConfigSchema>;
