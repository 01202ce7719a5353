/** What every ACI tool shares: the definition type, argument helpers and the runtime the tools close over. */
import { z } from "zod";
import type { Tool, ToolContext, ToolResult } from "../../src/shared/contracts.js";
import type { AciConfig } from "../config/aci.js";
import type { AciToolName } from "./tool-names.js";

/** A tool definition with the signature shown in its documentation and usage messages. */
export interface AciTool<Args extends Record<string, unknown> = Record<string, unknown>> extends Tool<Args> {
  signature: string;
}

/** What the tools of one environment share besides the sandbox and the viewer state. */
export interface AciRuntime {
  config: AciConfig;
  /** Repository root inside the sandbox. */
  root: string;
  /** Commit the sandbox started from; `submit` diffs against it. */
  baseCommit: string;
  /** Earlier contents of files changed by the editor bundle, newest last, for `undo_edit`. */
  editHistory: Map<string, Buffer[]>;
}

/** An integer argument; text-mode models send "40", function-calling models 40, both are accepted. */
export function integerArg(description: string) {
  return z
    .preprocess(
      (value) => (typeof value === "string" && /^\s*[-+]?\d+\s*$/.test(value) ? Number(value) : value),
      z.number().int(),
    )
    .describe(description);
}

/** A boolean argument; text-mode models send "true"/"false". */
export function booleanArg(description: string) {
  return z
    .preprocess((value) => (value === "true" ? true : value === "false" ? false : value), z.boolean())
    .describe(description);
}

export function stringArg(description: string) {
  return z.string().describe(description);
}

/** `name <a> [<b>]` from the key order of the schema. */
function defaultSignature(name: string, parameters: z.ZodObject<z.ZodRawShape>): string {
  const parts = [name];
  for (const [key, schema] of Object.entries(parameters.shape)) {
    parts.push((schema as z.ZodType).safeParse(undefined).success ? `[<${key}>]` : `<${key}>`);
  }
  return parts.join(" ");
}

export function defineTool<Shape extends z.ZodRawShape>(definition: {
  name: AciToolName;
  doc: string;
  parameters: z.ZodObject<Shape>;
  signature?: string;
  multilineArg?: keyof Shape & string;
  run(args: z.output<z.ZodObject<Shape>>, context: ToolContext): Promise<ToolResult>;
}): AciTool {
  const parameters = definition.parameters as unknown as z.ZodObject<z.ZodRawShape>;
  return {
    name: definition.name,
    doc: definition.doc,
    parameters,
    signature: definition.signature ?? defaultSignature(definition.name, parameters),
    ...(definition.multilineArg ? { multilineArg: definition.multilineArg } : {}),
    run: definition.run as AciTool["run"],
  };
}

export function observation(text: string): ToolResult {
  return { observation: text };
}

/** The answer of an edit tool that wrote its change: `edited` is what the agent loop's watcher reads. */
export function written(text: string): ToolResult {
  return { observation: text, edited: true };
}

export const noFileOpen = "No file open. Use the open command first.";
