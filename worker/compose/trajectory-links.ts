import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { LinkPolicy } from "../../src/github/inert-links.js";
import { trajectoryUrl } from "../../src/trajectories.js";
import { jobLogger, type Logger } from "../log.js";
import type { ProcessorDeps } from "../pipeline/fix-job.js";
import { githubStatusReporter } from "../pipeline/publish.js";
import type { WorkerSettings } from "./built-worker.js";

/**
 * With PUBLIC_URL the status and summary link the full trajectory, served (signed, expiring) by
 * src/trajectories.ts; only once the run has written one.
 */
export function trajectoryLinks(settings: WorkerSettings, trajectoryDir: string) {
  return (run: string) =>
    settings.PUBLIC_URL && settings.WEBHOOK_SECRET
      ? {
          trajectoryUrl: trajectoryUrl(settings.PUBLIC_URL, settings.WEBHOOK_SECRET, `${run}.traj`, {
            ttlMs: settings.AGENT_FIX_TRAJECTORY_LINK_DAYS * 24 * 60 * 60 * 1000,
          }),
          trajectoryWritten: () => existsSync(join(trajectoryDir, `${run}.traj`)),
        }
      : {};
}

/** The status comment of a job, as the pipeline and the admission write it. */
export function statusOf(
  settings: WorkerSettings,
  logger: Logger,
  links?: LinkPolicy,
): ProcessorDeps["status"] {
  const linkTo = trajectoryLinks(settings, resolve(settings.AGENT_FIX_TRAJECTORY_DIR));
  return (octokit, job, run) =>
    githubStatusReporter(octokit, job, {
      ...linkTo(run),
      logger: jobLogger(logger, job),
      ...(links ? { links } : {}),
    });
}
