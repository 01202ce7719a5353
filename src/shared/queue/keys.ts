/** Redis key and channel names of one fix queue, beside BullMQ's own keys under the same prefix. */
export interface QueueNames {
  readonly prefix: string;
  readonly name: string;
}

export function cancelFlagKey(names: QueueNames, jobId: string): string {
  return `${names.prefix}:${names.name}:cancel:${jobId}`;
}

export function claimKey(names: QueueNames, jobId: string): string {
  return `${names.prefix}:${names.name}:claim:${jobId}`;
}

export function cancelChannel(names: QueueNames): string {
  return `${names.prefix}:${names.name}:cancel`;
}

/** The issue's status comment id, reused by every later run so the issue keeps one status comment. */
export function statusCommentKey(names: QueueNames, repoId: number, issueNumber: number): string {
  return `${names.prefix}:${names.name}:status:${repoId}:${issueNumber}`;
}

/** The record of a run a worker holds (job data: ids only), so a live worker can finalize it if that one dies. */
export function runRecordKey(names: QueueNames, jobId: string): string {
  return `${names.prefix}:${names.name}:run:${jobId}`;
}

/** A signed webhook body (its SHA-256) being or already handled, so a replay of it does nothing. */
export function signedBodyKey(names: QueueNames, digest: string): string {
  return `${names.prefix}:${names.name}:signed-body:${digest}`;
}

/** Review feedback on an issue's pull request waiting for the issue's current run to end (a list). */
export function feedbackKey(names: QueueNames, repoId: number, issueNumber: number): string {
  return `${names.prefix}:${names.name}:feedback:${repoId}:${issueNumber}`;
}

/** That a CI round was started for a head commit of a pull request, so a commit gets one round at most. */
export function ciRoundKey(names: QueueNames, repoId: number, pullNumber: number, headSha: string): string {
  return `${names.prefix}:${names.name}:ci-round:${repoId}:${pullNumber}:${headSha}`;
}

/**
 * The model cost of every run on one of the app's pull requests so far, and whether its ceiling was
 * said on it (a hash): review, CI and rebase rounds stop once it reaches the operator's ceiling.
 */
export function pullCostKey(names: QueueNames, repoId: number, pullNumber: number): string {
  return `${names.prefix}:${names.name}:pull-cost:${repoId}:${pullNumber}`;
}

/** The prefix of BullMQ's own job hashes (`<prefix>:<name>:<jobId>`), for scripts that read a job's fields. */
export function jobKeyPrefix(names: QueueNames): string {
  return `${names.prefix}:${names.name}:`;
}

/** An installation's live runs (a sorted set by start), which ranks a new job for fair order. */
export function fairLiveKey(names: QueueNames, installationId: number): string {
  return `${names.prefix}:${names.name}:fair:${installationId}:live`;
}

/** An installation's held run slots (a sorted set by lease end). */
export function fairSlotsKey(names: QueueNames, installationId: number): string {
  return `${names.prefix}:${names.name}:fair:${installationId}:slots`;
}

/** An installation's jobs parked waiting for a slot. */
export function fairParkedKey(names: QueueNames, installationId: number): string {
  return `${names.prefix}:${names.name}:fair:${installationId}:parked`;
}

/** That a run's "waiting for a slot" note was written, so a run parked many times notes it once. */
export function fairNotedKey(names: QueueNames, run: string): string {
  return `${names.prefix}:${names.name}:fair:noted:${run}`;
}

/** A repository's runs counted on one UTC day (`YYYY-MM-DD`). */
export function usageRunsKey(names: QueueNames, repoId: number, day: string): string {
  return `${names.prefix}:${names.name}:usage:runs:${repoId}:${day}`;
}

/** An installation's model spend in one UTC month (`YYYY-MM`). */
export function usageSpendKey(names: QueueNames, installationId: number, month: string): string {
  return `${names.prefix}:${names.name}:usage:spend:${installationId}:${month}`;
}

/** A Marketplace account's plan, as the last purchase event said. */
export function planKey(names: QueueNames, accountId: number): string {
  return `${names.prefix}:${names.name}:plan:${accountId}`;
}

/** A finished run's result kept for publishing when publishing failed (its key names the run). */
export function pendingPublishKey(names: QueueNames, key: string): string {
  return `${names.prefix}:${names.name}:publish:${key}`;
}

/**
 * The commit a job's check run ("agent-fix / tests") is on while it may be in progress, so whatever ends
 * the job (a cancel, a failure, its worker dying) completes it.
 */
export function openCheckRunKey(names: QueueNames, jobId: string): string {
  return `${names.prefix}:${names.name}:check-run:${jobId}`;
}

/** That an issue got its "label refused" answer, so the label added again is not answered twice. */
export function labelRefusedKey(names: QueueNames, repoId: number, issueNumber: number): string {
  return `${names.prefix}:${names.name}:label-refused:${repoId}:${issueNumber}`;
}

/** How many /agent-fix help and status replies a person got on an issue this hour (the replies' rate limit). */
export function infoRepliesKey(
  names: QueueNames,
  repoId: number,
  issueNumber: number,
  login: string,
): string {
  return `${names.prefix}:${names.name}:info-replies:${repoId}:${issueNumber}:${login.toLowerCase()}`;
}

/*
 * The trajectory store's keys sit under the queue prefix alone (not the queue name): the server and every
 * worker of any queue read the same runs.
 */

/** A stored run's summary. */
export function trajectoryRunKey(prefix: string, run: string): string {
  return `${prefix}:run:${run}`;
}

/** The stored runs by time (a sorted set), newest last. */
export function trajectoryIndexKey(prefix: string): string {
  return `${prefix}:runs`;
}

/** A stored run's trajectory when Redis holds it (no S3 store). */
export function trajectoryBlobKey(prefix: string, run: string): string {
  return `${prefix}:trajectory:${run}`;
}

/* The dashboard's keys, also under the queue prefix alone: one dashboard serves every queue. */

/** A dashboard sign-in session, by the SHA-256 of its cookie (the cookie itself is never stored). */
export function dashboardSessionKey(prefix: string, cookieDigest: string): string {
  return `${prefix}:dashboard:session:${cookieDigest}`;
}

/** A GitHub sign-in's OAuth state nonce, spent once on the callback. */
export function oauthStateKey(prefix: string, nonce: string): string {
  return `${prefix}:dashboard:oauth-state:${nonce}`;
}

/** The prefix of one sign-in rate limit's counters (its store adds the client address). */
export function signInLimitPrefix(prefix: string, kind: "failures" | "starts"): string {
  return `${prefix}:dashboard:sign-in-${kind}:`;
}
