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
