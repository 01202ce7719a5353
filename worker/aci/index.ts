/**
 * Entry point of the Agent-Computer Interface: an Environment of tools over one sandbox.
 * Creating it records the base commit (making a repository if the workdir has none) and prepares the
 * persistent shell (pagers off, editors refused, current directory at the repository root).
 */

import type { Environment, Sandbox } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import type { AciConfig } from "../config/aci.js";
import { bundleTools } from "./bundles.js";
import { AciEnvironment } from "./environment.js";
import { readHead, recordBaseCommit } from "./git.js";
import type { AciRuntime } from "./tool.js";
import { sessionSetup } from "./tools/shell-tools.js";

export async function createEnvironment(options: {
  sandbox: Sandbox;
  config: AciConfig;
  /**
   * The commit the host copied the repository in at: read back in the same command as the shell's setup
   * (one round trip, one git process); the base commit is recorded the long way when HEAD differs.
   */
  expectedBase?: string | undefined;
}): Promise<Environment> {
  const { sandbox, config, expectedBase } = options;
  const head = expectedBase ? ` && { ${readHead} 2>/dev/null || true; }` : "";
  const setup = await sandbox.exec(
    `${sessionSetup(sandbox.workdir)}; command -v rg >/dev/null && command -v git >/dev/null${head}`,
    {
      timeoutMs: config.toolTimeoutMs,
    },
  );
  if (setup.exitCode !== 0) {
    throw new SandboxError("the sandbox lacks ripgrep (rg) or git, which the ACI needs", {
      code: "aci_tools_missing",
      retryable: false,
      hint: "Install ripgrep and git in the sandbox image (sandbox/image/Dockerfile).",
    });
  }
  const readBack = setup.output.trim().split("\n").at(-1);
  const runtime: AciRuntime = {
    config,
    root: sandbox.workdir,
    baseCommit:
      expectedBase && readBack === expectedBase
        ? expectedBase
        : await recordBaseCommit(sandbox, config.toolTimeoutMs),
    editHistory: new Map(),
  };
  return new AciEnvironment(config.bundle, bundleTools(config.bundle, runtime), sandbox, runtime, config);
}
