/** The two tool bundles: `aci` (the SWE-agent paper's interface) and `editor` (str_replace style). */
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
  if (bundle === "editor") {
    return [...editorTools(runtime), findFile!, searchDir!, searchFile!, bash!, submit!];
  }
  return [findFile!, searchDir!, searchFile!, ...viewerTools(runtime), editTool(runtime), bash!, submit!];
}
