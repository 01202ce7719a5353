import type { Sandbox } from "../../src/contracts.js";
import { AgentFixError } from "../../src/errors.js";

interface SetupOptions {
  commands: readonly string[];
  /** Operator-configured secrets for this repository (private registries): per-command env only. */
  secrets?: Record<string, string>;
  /** Whether the sandbox was started with network; it is cut either way before this returns. */
  networkWasOn: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

interface SetupResult {
  commands: { command: string; exitCode: number; durationMs: number }[];
}

/** The last lines of a command's output, for a status comment. */
function tail(output: string, lines = 30): string {
  const all = output.trimEnd().split("\n");
  return all.slice(-lines).join("\n");
}

/**
 * Step 5 of docs/architecture.md: the repository's setup commands, with network (unless the repo config
 * turned it off) and the setup secrets. Then the network is cut, whatever happened: the agent never has
 * network or secrets.
 */
export async function runSetup(sandbox: Sandbox, options: SetupOptions): Promise<SetupResult> {
  const result: SetupResult = { commands: [] };
  try {
    for (const command of options.commands) {
      const run = await sandbox.exec(command, {
        timeoutMs: options.timeoutMs,
        env: options.secrets ?? {},
        ...(options.signal ? { signal: options.signal } : {}),
      });
      result.commands.push({ command, exitCode: run.exitCode, durationMs: run.durationMs });
      if (run.exitCode !== 0) {
        const why = run.timedOut
          ? `timed out after ${Math.round(options.timeoutMs / 1000)} s`
          : `exited ${run.exitCode}`;
        throw new AgentFixError(
          `Setup command \`${command}\` ${why}:\n${redactAll(tail(run.output), options.secrets)}`,
          {
            code: "setup_failed",
            fault: "repository",
            hint: "Fix the `setup` commands in .github/agent-fix.yml (they run in a Debian container as a non-root user).",
          },
        );
      }
    }
  } finally {
    if (options.networkWasOn) await sandbox.setNetwork(false);
  }
  return result;
}

function redactAll(text: string, secrets: Record<string, string> | undefined): string {
  let out = text;
  for (const value of Object.values(secrets ?? {})) if (value.length >= 4) out = out.split(value).join("***");
  return out;
}
