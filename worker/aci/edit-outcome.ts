/**
 * Whether an edit tool wrote its change, as a structured field of the tool result (`edited`) that the
 * agent loop's watcher reads: the edit tools set it when they write (tool.ts `written`); an edit tool's
 * answer without it wrote nothing (a refusal, a rejected edit, a bad argument).
 */
import type { ToolResult } from "../../src/shared/contracts.js";
import type { AciToolName } from "./tool-names.js";

/** The tools that change files. */
const EDIT_TOOLS: ReadonlySet<string> = new Set<AciToolName>(["edit", "str_replace", "insert", "create"]);

/** `result` with `edited` filled in for an edit tool. */
export function withEditOutcome(tool: string, result: ToolResult): ToolResult {
  if (!EDIT_TOOLS.has(tool) || result.edited !== undefined || result.formatError) return result;
  return { ...result, edited: false };
}
