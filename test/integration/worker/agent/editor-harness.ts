/**
 * Replayed trajectories of the `editor` bundle (issue 16): the loop over the real ACI in a local
 * sandbox holding test/fixtures/agent/editor-repo, with config/default.yaml set to the editor bundle.
 */
import { join } from "node:path";
import { LocalSandboxProvider } from "../../../../sandbox/local.js";
import type { Sandbox, Trajectory } from "../../../../src/shared/contracts.js";
import { createEnvironment } from "../../../../worker/aci/index.js";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { runAgent } from "../../../../worker/agent/index.js";
import { ReplayModel } from "../../../../worker/model/replay.js";
import { fixtures, replay } from "./harness.js";

export const editorRepo = join(fixtures, "editor-repo");

export type ActionFormat = "function_calling" | "thought_action";

/** The replay of one trajectory in each action format: NAME.jsonl and NAME-text.jsonl. */
const replayFile = (name: string, format: ActionFormat) =>
  replay(format === "function_calling" ? `${name}.jsonl` : `${name}-text.jsonl`);

const provider = new LocalSandboxProvider({ warn: () => {} });

export async function replayEditorRun(
  name: string,
  format: ActionFormat,
  cleanup: Sandbox[],
  bundle: "aci" | "editor" = "editor",
): Promise<{ trajectory: Trajectory; root: string; sandbox: Sandbox }> {
  const sandbox = await provider.create({ sourceDir: editorRepo, jobId: `editor-${name}` });
  cleanup.push(sandbox);
  const config = await loadConfig({ overrides: { aci: { bundle }, agent: { actionFormat: format } } });
  const environment = await createEnvironment({ sandbox, config: config.aci });
  const trajectory = await runAgent({
    model: await ReplayModel.fromFile(replayFile(name, format)),
    environment,
    config: config.agent,
    issue: { title: "total() of a list with None", body: "total([1, None]) raises TypeError." },
    repoName: "acme/editor",
  });
  return { trajectory, root: sandbox.workdir, sandbox };
}
