/**
 * The tool bundles: `aci` (the SWE-agent paper's interface), `editor` (str_replace style) and `shell` (bash
 * and submit only: the paper's "no ACI" ablation).
 */
import type { ToolBundleName } from "../config/aci.js";
import type { AciRuntime, AciTool } from "./tool.js";
import { editTool } from "./tools/edit-tool.js";
import { editorTools } from "./tools/editor-tools.js";
import { searchTools } from "./tools/search-tools.js";
import { shellTools } from "./tools/shell-tools.js";
import { viewerTools } from "./tools/viewer-tools.js";

export function bundleTools(bundle: ToolBundleName, runtime: AciRuntime): AciTool[] {
  const [findFile, searchDir, searchFile] = searchTools(runtime);
  const [bash, submit] = shellTools(runtime);
  if (bundle === "shell") return [bash!, submit!];
  if (bundle === "editor") {
    return [...editorTools(runtime), findFile!, searchDir!, searchFile!, bash!, submit!];
  }
  return [findFile!, searchDir!, searchFile!, ...viewerTools(runtime), editTool(runtime), bash!, submit!];
}
