/**
 * A change that was tested and pushed but could not be published (GitHub failed opening the pull
 * request with a retryable error) is kept with its job, so the job's next attempt only publishes:
 * the agent is not run again and the model is not paid for twice. Kept in Redis under the job's id
 * and creation time (a later run of the same issue reuses the job id, never the time).
 */
import { isRetryable } from "../../src/errors.js";
import type { QueueNames } from "../../src/queue/index.js";
import type { Logger } from "../log.js";
import { publishPullRequest } from "./publish-step.js";
import type { RunOutcome } from "./run.js";
import { type Publisher, type PullRequestDraft, progressIsBestEffort, type StatusReporter } from "./types.js";

/** The Redis commands the store needs. */
interface PendingPublishRedis {
  set(key: string, value: string, mode: "EX", seconds: number): Promise<unknown>;
  getdel(key: string): Promise<string | null>;
}

export interface PendingPublishStore {
  save(run: string, draft: PullRequestDraft): Promise<void>;
  /** The kept draft of `run`, removed from the store (null when there is none). */
  take(run: string): Promise<PullRequestDraft | null>;
}

/** Longer than every backoff between a job's attempts. */
const TTL_S = 24 * 60 * 60;

export function pendingPublishes(redis: PendingPublishRedis, names: QueueNames): PendingPublishStore {
  const key = (run: string) => `${names.prefix}:${names.name}:publish:${run}`;
  return {
    save: async (run, draft) => {
      await redis.set(key(run), JSON.stringify(draft), "EX", TTL_S);
    },
    async take(run) {
      const raw = await redis.getdel(key(run));
      if (!raw) return null;
      try {
        const draft = JSON.parse(raw) as PullRequestDraft;
        return typeof draft.branch === "string" && Array.isArray(draft.trajectory?.trajectory) ? draft : null;
      } catch {
        return null; // a kept draft that does not parse is no draft: the attempt runs anew
      }
    },
  };
}

/** The job's key in the store: its id and creation time. */
export function pendingRun(job: { id?: string | undefined; timestamp: number }): string {
  return `${job.id ?? ""}:${job.timestamp}`;
}

/** `publisher`, keeping the draft when opening the pull request fails in a way a retry may fix. */
export function keepForRetry(publisher: Publisher, store: PendingPublishStore, run: string): Publisher {
  return {
    ...publisher,
    async openOrUpdatePullRequest(draft) {
      try {
        return await publisher.openOrUpdatePullRequest(draft);
      } catch (error) {
        // Not kept, the next attempt runs anew: the opening's own error is the one to report.
        if (isRetryable(error)) await store.save(run, draft).catch(() => {});
        throw error;
      }
    },
  };
}

/** A job's later attempt after its change was pushed: only the publishing step, from the kept draft. */
export async function publishOnly(input: {
  draft: PullRequestDraft;
  publisher: Publisher;
  status: StatusReporter;
  requestedBy: string;
  logger?: Logger | undefined;
}): Promise<RunOutcome> {
  const started = Date.now();
  void input.status.progress("publishing").catch(progressIsBestEffort);
  const pr = await publishPullRequest(input);
  return {
    kind: "pull_request",
    number: pr.number,
    url: pr.url,
    trajectory: input.draft.trajectory,
    timings: { publish: Date.now() - started },
  };
}
