/**
 * Schema of the `worker:` section of config/default.yaml: how each worker process paces itself and
 * what it keeps warm. Tuning, not deployment: the environment says where things are (Redis, ports,
 * paths, secrets), this section how often and how much. These were environment variables before
 * (AGENT_FIX_LOCK_MS and the others of `movedToOperatorConfig` in worker-env.ts); a worker started
 * with one of them refuses to start, naming the key to set here instead.
 */
import { z } from "zod";

/** A size as the kept-environment store reads it: "20g", "512m"; 0 (a YAML number or "0") for none. */
const size = /^(0|[1-9]\d*[kmg]?)$/i;

export const workerTuningSchema = z
  .strictObject({
    lockMs: z
      .number()
      .int()
      .min(1000)
      .default(60_000)
      .describe(
        "A job's lock lasts this long and is renewed while the run lives: a dead worker's job moves to another worker this long after its last renewal.",
      ),
    stalledIntervalMs: z
      .number()
      .int()
      .min(100)
      .nullable()
      .default(null)
      .describe("How often workers look for jobs whose lock lapsed; null: half of `lockMs`."),
    reaperIntervalMs: z
      .number()
      .int()
      .min(1000)
      .default(300_000)
      .describe(
        "How often the worker removes what dead workers left behind (sandboxes, host checkouts, images it built); also done at start.",
      ),
    keptEnvironments: z
      .strictObject({
        size: z
          .union([z.literal(0), z.string().regex(size, 'a size such as "20g", or 0 for none')])
          .default("20g")
          .describe(
            "Total size of the environments kept after setup (warm start), least recently used removed above it; 0 keeps none.",
          ),
      })
      .prefault({})
      .describe("Environments committed after setup, so a repository's next run skips it."),
    standby: z
      .strictObject({
        sandboxes: z
          .number()
          .int()
          .min(0)
          .max(16)
          .default(3)
          .describe(
            "Sandboxes started ahead, up to three of each kind the worker used last (image, limits, toolchain variables; shells ready, a kept environment's files in place), so a run's next sandboxes (the baseline's and the first gate's at once, the proof's, the next run's agent's) start at once; one of a kept environment holds its kept files in memory; 0 keeps none.",
          ),
        idleMinutes: z
          .number()
          .positive()
          .max(240)
          .default(30)
          .describe("A standby sandbox not taken in this time is removed."),
        sharedImages: z
          .boolean()
          .default(true)
          .describe(
            "Standbys of the shared images too (the default sandbox image, those `repository.images` allows), so runs without a kept environment start their sandboxes at once; false: only kept environments get standbys.",
          ),
      })
      .prefault({})
      .describe("Sandboxes started ahead of need, so runs rarely wait for a container to start."),
    engineWatch: z
      .strictObject({
        everyMs: z
          .number()
          .int()
          .min(100)
          .default(5_000)
          .describe("How often each engine reached over a network is pinged."),
        timeoutMs: z
          .number()
          .int()
          .min(100)
          .default(5_000)
          .describe("How long a ping may take before it counts as missed."),
        misses: z
          .number()
          .int()
          .min(1)
          .default(2)
          .describe(
            "Missed pings in a row that make the engine gone: its runs fail as its loss and are retried on another.",
          ),
      })
      .prefault({})
      .describe(
        "How a worker watches the Docker engines it reaches over a network (tcp:// and ssh:// of AGENT_FIX_DOCKER_HOSTS): a host that vanishes never refuses a connection, so one that stops answering is found by these pings, within about everyMs * misses + timeoutMs.",
      ),
    keepUp: z
      .strictObject({
        strategy: z
          .enum(["merge", "rebase"])
          .default("merge")
          .describe(
            "How `/agent-fix rebase` brings the app's pull request up to date with its base: `merge` (a merge commit; never rewrites anyone's commits) or `rebase` (the branch's commits replayed on the base and force-pushed with a lease, only when every one of them is the app's; a conflict is resolved by the agent with the change replayed as one commit on the base; a person's commit on the branch makes it merge instead and say why).",
          ),
        whenConflicting: z
          .boolean()
          .default(false)
          .describe(
            "Also do it by itself when GitHub reports the app's pull request conflicting with its base (`mergeable_state: dirty`): looked at after each push to the base branch (the app's `push` event) and after each run of the app that pushes; once per base commit, never beside a run of the issue in flight.",
          ),
      })
      .prefault({})
      .describe("Keeping the app's pull requests up to date with their base branch."),
  })
  .describe(
    "How each worker process paces itself and what it keeps warm. Tuning, not deployment: these were AGENT_FIX_* environment variables before, which a worker now refuses, naming the key here.",
  );
export type WorkerTuning = z.infer<typeof workerTuningSchema>;
/** How `/agent-fix rebase` brings the app's pull request up to date with its base. */
export type KeepUpStrategy = WorkerTuning["keepUp"]["strategy"];
