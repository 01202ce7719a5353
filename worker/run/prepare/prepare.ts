/**
 * Preparing the run's environment: the sandboxes the repository's config calls for (its image, limits and
 * toolchain variables), the prepared tree (setup on the default branch's files, or the environment a run
 * like it kept), and the agent's sandbox started from it.
 */
import type { Sandbox } from "../../../src/shared/contracts.js";
import type { RunTimings } from "../../run-end.js";
import type { CheckedOut } from "../checkout/check-out.js";
import type { TrustedTree } from "../checkout/trusted-tree.js";
import type { LoadedRepoConfig } from "../configure/repo-config.js";
import type { OpenRun } from "../open/open-run.js";
import { progressIsBestEffort } from "../open/status-comment.js";
import type { Issue } from "../open/task.js";
import { type PreparedTree, prepareTree } from "./prepare-tree.js";
import { RunSandboxes } from "./run-sandboxes.js";
import { fallbackNote } from "./setup.js";

/** Every sandbox of the run: from the repository's image choice, or the one its devcontainer builds. */
export function runSandboxes(run: OpenRun, issue: Issue, trusted: TrustedTree, config: LoadedRepoConfig) {
  const options = {
    jobId: run.job.id,
    ...(config.limits ? { limits: config.limits } : {}),
    ...(config.image ? { image: config.image } : {}),
    ...(config.workspaceEnv ? { workspaceEnv: config.workspaceEnv } : {}),
    ...(config.imageBuild
      ? {
          imageBuild: {
            // Built from the default branch's files, as setup runs on them: never the agent's branch.
            root: trusted.dir,
            context: config.imageBuild.context,
            dockerfile: config.imageBuild.dockerfile,
            bases: config.imageBuild.bases,
            name: issue.repository.fullName,
          },
        }
      : {}),
  };
  return new RunSandboxes(run.parts.sandboxes, options, run.signal);
}

/**
 * The prepared tree, from the default branch's files; a review round's pull request branch is laid over
 * it. The status says when setup was skipped for a kept environment, or an optional install fell back.
 */
export async function prepare(
  run: OpenRun,
  issue: Issue,
  { checkout, trusted, config }: CheckedOut,
  sandboxes: RunSandboxes,
  workDir: string,
): Promise<PreparedTree> {
  void run.status.progress("setting_up").catch(progressIsBestEffort);
  const prepared = await prepareTree({
    sandboxes,
    trusted,
    ...(checkout.dir === trusted.dir ? {} : { branch: { dir: checkout.dir, headSha: checkout.headSha } }),
    root: workDir,
    setup: {
      commands: config.setup,
      network: config.setupNetwork && config.setup.length > 0,
      timeoutMs: config.setupTimeoutMs,
      ...(config.setupUser ? { user: config.setupUser } : {}),
      detected: config.detectedSetup,
    },
    secrets: issue.setupSecrets,
    intake: run.parts.intake,
    repository: {
      id: issue.repository.id,
      installationId: issue.repository.installationId,
      fullName: issue.repository.fullName,
    },
    signal: run.signal,
  });
  if (prepared.reused) run.status.configured(reuseNote(config.configNote, prepared.reused.preparedAt));
  if (prepared.fallbacks?.length) {
    run.status.configured(
      [config.configNote, ...prepared.fallbacks.map(fallbackNote)].filter(Boolean).join("\n\n"),
    );
  }
  return prepared;
}

/** The status comment's line on a warm start, after the config's own note. */
export function reuseNote(configNote: string | undefined, preparedAt: Date): string {
  const line = `Setup skipped: reused the environment prepared at ${preparedAt.toISOString()} (same image, setup commands and dependency files).`;
  return configNote ? `${configNote}\n\n${line}` : line;
}

/**
 * The agent's sandbox, started first: the one start the agent's first step waits for. Where the time to
 * it went is logged and returned (bench/warm.ts reads it from the job's result).
 */
export async function startAgentSandbox(
  run: OpenRun,
  sandboxes: RunSandboxes,
  prepared: PreparedTree,
): Promise<{ sandbox: Sandbox; timings: RunTimings }> {
  const began = performance.now();
  const sandbox = await sandboxes.start(prepared.dir);
  const startMs = Math.round(performance.now() - began);
  const timings: RunTimings = { sandbox: startMs, start_agent_sandbox: startMs };
  for (const [step, ms] of Object.entries(prepared.steps ?? {})) timings[`start_prepare_${step}`] = ms;
  for (const [phase, ms] of Object.entries(sandbox.startupPhases ?? {}))
    timings[`start_sandbox_${phase}`] = Math.round(ms);
  run.log.debug({ timings }, "agent sandbox started");
  return { sandbox, timings };
}
