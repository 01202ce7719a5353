export {
  type CancelOutcome,
  type CancelRequest,
  readCancelRequest,
  requestCancel,
  subscribeToCancels,
} from "./cancel.js";
export { connectRedis, type RedisRole } from "./connection.js";
export { toQueueError } from "./errors.js";
export {
  createFixQueue,
  DEFAULT_QUEUE_NAME,
  DEFAULT_QUEUE_PREFIX,
  defaultFixJobOptions,
  type EnqueueResult,
  enqueueFix,
  type FixQueue,
  type FixQueueOptions,
} from "./fix-queue.js";
export {
  type Feedback,
  FIX_JOB_NAME,
  type FixJobData,
  fixJobDataSchema,
  fixJobId,
  type JobTrigger,
  parseFixJobData,
} from "./job.js";
export {
  cancelChannel,
  cancelFlagKey,
  claimKey,
  type QueueNames,
  runRecordKey,
  statusCommentKey,
} from "./keys.js";
