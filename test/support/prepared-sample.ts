/**
 * The sample repository committed in a temp dir and prepared as the pipeline prepares a checkout
 * (no setup commands), with a sandbox started from it: the start of every pipeline-level test.
 */
import { cp, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../src/shared/contracts.js";
import { operatorTree } from "../../worker/run/checkout/trusted-tree.js";
import { prepareTree } from "../../worker/run/prepare/prepare-tree.js";
import type { RunSandboxes } from "../../worker/run/prepare/run-sandboxes.js";
import type { GateSetup } from "../../worker/run/solve/gate.js";
import type { TestCommand } from "../../worker/run/tests/test-run.js";
import { commitAll } from "./committed-repo.js";

export async function preparedSample(
  sandboxes: RunSandboxes,
  options: { source: string; test: TestCommand; prefix: string },
): Promise<{ root: string; gateSetup: GateSetup; sandbox: Sandbox }> {
  const root = await mkdtemp(join(tmpdir(), options.prefix));
  const repo = join(root, "repo");
  await cp(options.source, repo, { recursive: true });
  const prepared = await prepareTree({
    sandboxes,
    trusted: operatorTree(repo, commitAll(repo, "sample")),
    root,
    setup: { commands: [], network: false, timeoutMs: 10_000 },
    secrets: {},
  });
  const gateSetup = { prepared, sandboxes, test: options.test, scratch: join(root, "scratch") };
  return { root, gateSetup, sandbox: await sandboxes.start(prepared.dir) };
}
