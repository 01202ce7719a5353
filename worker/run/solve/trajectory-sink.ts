/**
 * The agent's trajectory, after every step, into the deployment's store (src/shared/trajectory-store.ts), where
 * the webhook process's dashboard and trajectory links read it. A store that fails costs a log line,
 * never the run: the local file is still written.
 */
import type { FixJobData } from "../../../src/shared/queue/index.js";
import type { TrajectoryStore } from "../../../src/shared/trajectory-store.js";
import type { TrajectorySink } from "../../agent/trajectory.js";
import type { Logger } from "../../log.js";

export function storeTrajectories(store: TrajectoryStore, logger: Logger) {
  let warned = false;
  return (job: FixJobData, run: string): TrajectorySink =>
    async (snapshot) => {
      const meta = {
        repo: `${job.owner}/${job.repo}`,
        repoId: job.repoId,
        issue: job.issueNumber,
        trigger: job.trigger,
      };
      await store.save(run, meta, snapshot).catch((err: unknown) => {
        // Once per process is enough to see it; every step would flood the log.
        if (!warned) logger.warn({ err, run }, "trajectory not stored (the dashboard will lack it)");
        warned = true;
      });
    };
}
