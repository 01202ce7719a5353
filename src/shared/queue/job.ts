/**
 * The payload of a fix job as it sits in Redis: ids only, never a token. The worker mints its own
 * installation token from `installationId` when it runs the job.
 */
import { z } from "zod";

export const FIX_JOB_NAME = "fix";

export const jobTriggerSchema = z.enum(["label", "comment", "review", "ci", "rebase"]);
export type JobTrigger = z.infer<typeof jobTriggerSchema>;

/** Most feedback one follow-up round takes; what comes on top waits for the next round. */
export const MAX_FEEDBACK = 20;

/** A review ("changes requested") or a comment command on the app's pull request, by id only. */
export const feedbackSchema = z
  .object({
    reviewId: z.number().int().positive().optional(),
    commentId: z.number().int().positive().optional(),
    /** Login of the reviewer or commenter. */
    by: z.string().min(1),
  })
  .strict();
export type Feedback = z.infer<typeof feedbackSchema>;

/** Most check runs, statuses or workflow runs one CI round names; the rest are read from the head commit. */
const MAX_CI_IDS = 50;
const ciIds = z.array(z.number().int().positive()).max(MAX_CI_IDS);

/**
 * CI jobs: the failing checks on the head commit of the app's pull request, by id only; the worker reads
 * their names, output, annotations and logs with the installation's client when the round runs.
 */
export const ciFailureSchema = z
  .object({
    /** The head commit the checks failed on: one CI round per head commit. */
    headSha: z.string().regex(/^[0-9a-f]{40}$/),
    checkRunIds: ciIds.default([]),
    checkSuiteIds: ciIds.default([]),
    workflowRunIds: ciIds.default([]),
    /** Commit statuses by context (a status has no id the API can read it back by). */
    statusContexts: z.array(z.string().min(1).max(255)).max(MAX_CI_IDS).default([]),
  })
  .strict();
export type CiFailure = z.infer<typeof ciFailureSchema>;

export const fixJobDataSchema = z
  .object({
    installationId: z.number().int().positive(),
    /** The account (user or organisation) the repository belongs to: its Marketplace plan's limits apply. */
    accountId: z.number().int().positive().optional(),
    owner: z.string().min(1),
    repo: z.string().min(1),
    repoId: z.number().int().positive(),
    /** The issue to fix; for a review job, the issue the pull request fixes (or the PR itself). */
    issueNumber: z.number().int().positive(),
    /** Login of the person who labelled, commented or reviewed. */
    requestedBy: z.string().min(1),
    trigger: jobTriggerSchema,
    /** X-GitHub-Delivery of the webhook that started the run (for tracing). */
    deliveryId: z.string().min(1),
    /** The status comment on the issue, edited in place as the run moves on. */
    statusCommentId: z.number().int().positive().optional(),
    /** Review, CI and rebase jobs: the app's pull request (whose review asked for changes, whose checks failed, or to bring up to date). */
    pullNumber: z.number().int().positive().optional(),
    /** Review jobs: the review (state "changes requested") the run addresses; absent for a comment command. */
    reviewId: z.number().int().positive().optional(),
    /** Review jobs started by the comment command on the pull request: that comment (its text is the request). */
    commentId: z.number().int().positive().optional(),
    /** Review jobs: further reviews and requests that came in while an earlier run of the issue was queued or running. */
    feedback: z.array(feedbackSchema).max(MAX_FEEDBACK).optional(),
    /** CI jobs: what failed on the pull request's head commit (ids only). */
    ci: ciFailureSchema.optional(),
    /** Times a worker shutting down (deploy, restart) handed this run back to the queue unfinished. */
    handoffs: z.number().int().positive().optional(),
  })
  .strict();
export type FixJobData = z.infer<typeof fixJobDataSchema>;

/** Parses job data read back from Redis; a mismatch names the field. */
export function parseFixJobData(data: unknown): FixJobData {
  const result = fixJobDataSchema.safeParse(data);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new Error(`Invalid fix job data: ${issues}`);
  }
  return result.data;
}

/**
 * One id per issue, so a run queued or running for an issue is never added twice: review runs use the
 * issue's id too (the default kind), so a review run and an issue run never run at once.
 * BullMQ refuses most custom ids that contain ":", hence the dashes.
 */
export function fixJobId(repoId: number, issueNumber: number, kind: "fix" | "review" = "fix"): string {
  return `${kind}-${repoId}-${issueNumber}`;
}
