/** `agent-fix inspect` (a trajectory, step by step) and `agent-fix replay` (its actions, again, on a repository). */
import type { Command } from "commander";
import { resolveRepo, runId } from "../agent/cli-support.js";
import { loadConfig } from "../agent/config-file.js";
import { formatTrajectory, readTrajectory } from "../agent/inspect.js";
import { formatReplayReport, replayActions } from "../agent/replay-check.js";
import {
  imageOption,
  print,
  type SandboxDriver,
  type SetExitCode,
  sandboxOption,
  startSandbox,
} from "./common.js";

interface ReplayOptions {
  repo: string;
  sandbox: SandboxDriver;
  image?: string;
  config?: string;
}

export function registerTrajectoryCommands(program: Command, setExitCode: SetExitCode): void {
  program
    .command("inspect")
    .description("show a trajectory: each step's thought, action and observation, then the outcome")
    .argument("<file>", "a .traj file")
    .option("--full", "show observations whole")
    .action(async (file: string, options: { full?: boolean }) => setExitCode(await inspect(file, options)));
  program
    .command("replay")
    .description("re-run a trajectory's actions on a repository and report where the observations differ")
    .argument("<file>", "a .traj file")
    .requiredOption("--repo <dir|git-url>", "the repository to replay against")
    .addOption(sandboxOption())
    .addOption(imageOption())
    .option("--config <file>", "a YAML file overriding config/default.yaml")
    .action(async (file: string, options: ReplayOptions) => setExitCode(await replay(file, options)));
}

async function inspect(file: string, options: { full?: boolean }): Promise<number> {
  const trajectory = await readTrajectory(file);
  print(formatTrajectory(trajectory, { maxObservationLines: options.full ? 0 : 30 }));
  return 0;
}

async function replay(file: string, options: ReplayOptions): Promise<number> {
  const trajectory = await readTrajectory(file);
  const bundle = trajectory.info.tool_bundle;
  const config = await loadConfig({
    files: options.config ? [options.config] : [],
    ...(bundle === "aci" || bundle === "editor" ? { overrides: { aci: { bundle } } } : {}),
  });
  const repo = await resolveRepo(options.repo);
  const { sandbox, environment } = await startSandbox(
    { driver: options.sandbox, image: options.image, repoName: repo.name },
    repo.dir,
    runId(repo.name),
    config,
  );
  try {
    const recordedWorkdir = typeof trajectory.info.workdir === "string" ? trajectory.info.workdir : undefined;
    const report = await replayActions(trajectory, environment, {
      ...(recordedWorkdir ? { recordedWorkdir } : {}),
      workdir: sandbox.workdir,
    });
    print(formatReplayReport(report));
    return report.differences.length === 0 ? 0 : 1;
  } finally {
    await sandbox.dispose();
    await repo.cleanup();
  }
}
