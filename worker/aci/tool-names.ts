/**
 * The names of the ACI's tools, every bundle's (worker/aci/bundles.ts). A tool is defined under one of
 * these (defineTool), and the agent loop's watcher tells edits and scrolls apart by them, so a renamed
 * tool cannot silently fall out of either.
 */
const ACI_TOOL_NAMES = [
  "bash",
  "submit",
  "open",
  "goto",
  "scroll_up",
  "scroll_down",
  "create",
  "edit",
  "str_replace",
  "insert",
  "undo_edit",
  "view",
  "find_file",
  "search_dir",
  "search_file",
] as const;

export type AciToolName = (typeof ACI_TOOL_NAMES)[number];

const NAMES: ReadonlySet<string> = new Set(ACI_TOOL_NAMES);

/** Whether a name the model sent is one of the ACI's tools. */
export function isAciToolName(name: string): name is AciToolName {
  return NAMES.has(name);
}
