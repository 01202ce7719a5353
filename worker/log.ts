/**
 * The worker's logger: pino (what Probot logs with, the same version), JSON lines on stdout. The
 * composition root (worker/main.ts) makes one per process and passes it in; each job logs
 * through a child that puts the job id, installation and repository on every line.
 */
import { type Logger, pino } from "pino";
import { type FixJobData, fixJobId } from "../src/shared/queue/index.js";

export type { Logger };

export function createWorkerLogger(level = "info"): Logger {
  return pino({ name: "agent-fix-worker", level });
}

/** The job's logger: every line carries `jobId`, `installation` and `repository`. */
export function jobLogger(
  logger: Logger,
  job: Pick<FixJobData, "installationId" | "owner" | "repo" | "repoId" | "issueNumber">,
  jobId = fixJobId(job.repoId, job.issueNumber),
): Logger {
  return logger.child({ jobId, installation: job.installationId, repository: `${job.owner}/${job.repo}` });
}
