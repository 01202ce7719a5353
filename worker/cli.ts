#!/usr/bin/env node
/**
 * `agent-fix`: run the agent on a local repository with no GitHub involved, evaluate it on SWE-bench-style
 * instances (`eval`, `eval-replays`, worker/eval/), mine such instances from a repository's history
 * (`mine`), read a trajectory, or replay one against a repository; one file a command in worker/cli/.
 * A composition root: the commands build the concrete sandbox provider, model and ACI.
 * Exit codes: 0 success, 1 the run did not produce an accepted patch (or replay found differences),
 * 2 an error in the arguments or the configuration.
 */
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Command, CommanderError } from "commander";
import { AgentFixError } from "../src/shared/errors.js";
import type { SetExitCode } from "./cli/common.js";
import { registerEvalCommand, registerEvalReplaysCommand } from "./cli/eval-commands.js";
import { registerMineCommand } from "./cli/mine-command.js";
import { registerRunCommand } from "./cli/run-command.js";
import { registerTrajectoryCommands } from "./cli/trajectory-commands.js";

export function buildProgram(setExitCode: SetExitCode): Command {
  const program = new Command()
    .name("agent-fix")
    .description("Resolve an issue in a repository with an LLM agent, without GitHub.")
    .exitOverride()
    .showHelpAfterError();
  registerRunCommand(program, setExitCode);
  registerTrajectoryCommands(program, setExitCode);
  registerEvalCommand(program, setExitCode);
  registerMineCommand(program, setExitCode);
  registerEvalReplaysCommand(program, setExitCode);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  try {
    await buildProgram((value) => {
      code = value;
    }).parseAsync(argv);
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.exitCode === 0
        ? 0
        : 2;
    }
    if (error instanceof AgentFixError) {
      process.stderr.write(`agent-fix: ${error.describe()}\n`);
      return error.fault === "config" || error.fault === "user" ? 2 : 1;
    }
    process.stderr.write(
      `agent-fix: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}

// Run when executed (tsx worker/cli.ts, or the installed bin, a symlink), not when imported by tests.
const isEntry =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (isEntry) process.exitCode = await main(process.argv);
