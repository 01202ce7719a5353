/**
 * A model whose answers (and failures) are told to an observer as they happen: the metrics and the
 * installation's monthly spend watch each call this way. Its name and cost note are the model's own.
 */
import type { Model, ModelResponse } from "../../src/shared/contracts.js";

interface ModelObserver {
  /** Each answer, before the agent gets it (awaited). */
  answered: (answer: ModelResponse) => void | Promise<void>;
  /** Each call that failed, then rethrown. */
  failed?: (error: unknown, signal: AbortSignal | undefined) => void;
}

export function observedModel(model: Model, observer: ModelObserver): Model {
  return {
    name: model.name,
    ...(model.costNote !== undefined ? { costNote: model.costNote } : {}),
    query: async (messages, tools, signal) => {
      let answer: ModelResponse;
      try {
        answer = await model.query(messages, tools, signal);
      } catch (error) {
        observer.failed?.(error, signal);
        throw error;
      }
      await observer.answered(answer);
      return answer;
    },
  };
}
