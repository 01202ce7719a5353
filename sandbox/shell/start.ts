/** Starting a ShellSession's shell (shell/session.ts): the driver's spawn, and why a start failed. */

import { SandboxError } from "../../src/shared/errors.js";
import type { ShellProcess, ShellSessionOptions } from "./session-contract.js";

type StartOptions = Pick<ShellSessionOptions, "name" | "spawn" | "whyNoShell">;

/** The driver's shell process; a failure to make one is a retryable shell_start_failed. */
export async function spawnShell(options: StartOptions): Promise<ShellProcess> {
  try {
    return await options.spawn();
  } catch (error) {
    if (error instanceof SandboxError) throw error;
    // The driver's word on why (the container stopped under it) beats a bare API error.
    const why = await options.whyNoShell?.().catch(() => undefined);
    const said = [(error as Error).message, why].filter(Boolean).join("; ");
    throw new SandboxError(`cannot start the ${options.name} shell: ${said}`, {
      code: "shell_start_failed",
      retryable: true,
      cause: error,
    });
  }
}

/** A shell that never answered its first line, with the driver's word on why if it has one. */
export async function shellDidNotStart(options: StartOptions): Promise<SandboxError> {
  const why = await options.whyNoShell?.().catch(() => undefined);
  return new SandboxError(`the ${options.name} shell did not start${why ? `: ${why}` : ""}`, {
    code: "shell_start_failed",
    retryable: true,
  });
}

/** The session's init script failed (it printed `output`). */
export function shellSetupFailed(name: string, output: string): SandboxError {
  return new SandboxError(`the ${name} shell's setup failed: ${output}`, { code: "shell_start_failed" });
}

export function sessionDisposed(): SandboxError {
  return new SandboxError("the sandbox has been disposed", { code: "sandbox_disposed" });
}
