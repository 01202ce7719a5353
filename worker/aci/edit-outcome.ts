/**
 * Whether an edit tool wrote its change, as a structured field of the tool result (`edited`) that the
 * agent loop's watcher reads. Tools may set it themselves; for those that do not, it is read here from
 * the ACI's own refusal texts (gated-write.ts, editor-tools.ts), the one place that knows their wording.
 */
import type { ToolResult } from "../../src/contracts.js";

/** The tools that change files. */
const EDIT_TOOLS: ReadonlySet<string> = new Set(["edit", "str_replace", "insert", "create"]);

const REFUSED =
  /have NOT been applied|not applied|No replacement was performed|did not appear|matched \d+ times/i;

/** `result` with `edited` filled in for an edit tool. */
export function withEditOutcome(tool: string, result: ToolResult): ToolResult {
  if (!EDIT_TOOLS.has(tool) || result.edited !== undefined || result.formatError) return result;
  return { ...result, edited: !REFUSED.test(result.observation) };
}
