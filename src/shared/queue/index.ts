export {
  type CancelRequest,
  readCancelRequest,
  requestCancel,
  subscribeToCancels,
} from "./cancel.js";
export { connectRedis } from "./connection.js";
export { toQueueError } from "./errors.js";
export {
  createFixQueue,
  DEFAULT_QUEUE_NAME,
  DEFAULT_QUEUE_PREFIX,
  enqueueFix,
  type FixQueue,
} from "./fix-queue.js";
export {
  type CiFailure,
  type Feedback,
  type FixJobData,
  fixJobId,
  parseFixJobData,
} from "./job.js";
export {
  type QueueNames,
  runRecordKey,
} from "./keys.js";
