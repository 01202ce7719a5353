/**
 * The first wave's agent, to replay a session through as bench:tokens' baseline: the code of the last
 * commit of session 1 (issues 2-5, "stop 6" of the project's notes; the commit `duplicates --base` of
 * stop 17 names), taken out of git into a temporary directory and imported from there, so its own
 * loop, prompts, history processor, ACI and sandbox driver run, beside today's, in this process. It
 * shares this checkout's node_modules: every dependency it had is still installed at the same version.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Environment, Gate, Model, Sandbox, Trajectory } from "../src/shared/contracts.js";

/** Session 1's last commit: f02a630 "tests: one storeComment for issue and pull-request comment events". */
export const FIRST_WAVE_COMMIT = "f02a630";

/** What the bench calls of the first wave's modules (their own types, structurally today's). */
export interface FirstWave {
  commit: string;
  loadConfig(options: { files?: string[] }): Promise<{ agent: unknown; aci: unknown }>;
  createSandbox(options: {
    sourceDir: string;
    jobId: string;
    image: string;
    env?: Record<string, string>;
  }): Promise<Sandbox>;
  createEnvironment(options: { sandbox: Sandbox; config: unknown }): Promise<Environment>;
  /** Its replay model: the loop tells a replay that ran out by the class of its own errors. */
  replayModel(file: string): Promise<Model>;
  runAgent(options: {
    model: Model;
    environment: Environment;
    config: unknown;
    issue: { title: string; body: string };
    repoName: string;
    gate?: Gate;
  }): Promise<Trajectory>;
  dispose(): void;
}

/** Extracts the first wave's sources from `repoRoot`'s history and imports its entry points. */
export async function loadFirstWave(repoRoot: string): Promise<FirstWave> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "agent-fix-first-wave-"));
  try {
    const archive = execFileSync(
      "git",
      [
        "-C",
        repoRoot,
        "archive",
        "--format=tar",
        FIRST_WAVE_COMMIT,
        "src",
        "worker",
        "sandbox",
        "config",
        "package.json",
      ],
      { maxBuffer: 256 * 1024 * 1024 },
    );
    execFileSync("tar", ["-x", "-C", dir], { input: archive });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `cannot take commit ${FIRST_WAVE_COMMIT} out of ${repoRoot}: ${(error as Error).message} (bench:tokens needs the repository's history: a full clone, not a shallow one)`,
    );
  }
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
  const load = (file: string) => import(path.join(dir, file));
  const [configFile, sandbox, aci, agent, model] = await Promise.all([
    load("worker/agent/config-file.ts"),
    load("sandbox/index.ts"),
    load("worker/aci/index.ts"),
    load("worker/agent/index.ts"),
    load("worker/model/replay.ts"),
  ]);
  return {
    commit: FIRST_WAVE_COMMIT,
    loadConfig: configFile.loadConfig,
    createSandbox: ({ image, ...options }) =>
      sandbox.createSandboxProvider("docker", { image }).create(options),
    createEnvironment: aci.createEnvironment,
    replayModel: (file) => model.ReplayModel.fromFile(file),
    runAgent: agent.runAgent,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
