/** What the `agent-fix` commands (worker/cli.ts) share: printing, option parsers, a sandbox with its ACI. */
import { InvalidArgumentError, Option } from "commander";
import { createSandboxProvider } from "../../sandbox/index.js";
import { createEnvironment } from "../aci/index.js";
import type { AgentFixConfig } from "../agent/config-file.js";

export type SandboxDriver = "docker" | "local";

/** The exit code a command's action hands back (0 success, 1 no accepted result, 2 bad input). */
export type SetExitCode = (code: number) => void;

export const print = (line: string) => process.stdout.write(`${line}\n`);

export const sandboxOption = () =>
  new Option("--sandbox <driver>", "where commands run: docker (isolated) or local (no isolation)")
    .choices(["docker", "local"])
    .default("docker");

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new InvalidArgumentError("expected a whole number of at least 1");
  }
  return number;
}

/** An option's values, one per occurrence (a repeatable option). */
export const collect = (value: string, previous: string[]) => [...previous, value];

/** A sandbox on `sourceDir` and the ACI over it; the sandbox is removed if the ACI cannot start. */
export async function startSandbox(
  driver: SandboxDriver,
  sourceDir: string,
  jobId: string,
  config: AgentFixConfig,
) {
  const provider = createSandboxProvider(driver);
  const sandbox = await provider.create({ sourceDir, jobId });
  try {
    const environment = await createEnvironment({ sandbox, config: config.aci });
    return { sandbox, environment };
  } catch (error) {
    await sandbox.dispose();
    throw error;
  }
}
