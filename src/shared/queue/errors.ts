/** Maps the project's errors to BullMQ's retry behaviour: only retryable errors are retried. */
import { UnrecoverableError } from "bullmq";
import { isRetryable } from "../errors.js";

/** What a processor should throw for `error`: the error itself when retrying can help, else an UnrecoverableError. */
export function toQueueError(error: unknown): Error {
  if (isRetryable(error)) return error as Error;
  const message = error instanceof Error ? error.message : String(error);
  const wrapped = new UnrecoverableError(message);
  (wrapped as Error & { cause?: unknown }).cause = error;
  return wrapped;
}
