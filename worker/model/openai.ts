/**
 * A Model over the official openai SDK: OpenAI itself and any OpenAI-compatible endpoint
 * (vLLM, Ollama, LiteLLM, OpenRouter, Azure's v1 API). Retries are the SDK's (model.retry.maxRetries),
 * with what it lacks added by the fetch it is given (retry.ts).
 */
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import type {
  AssistantMessage,
  ChatMessage,
  FunctionSpec,
  Model,
  ModelResponse,
  ToolCall,
} from "../../src/shared/contracts.js";
import { ConfigError, ModelError } from "../../src/shared/errors.js";
import type { ModelConfig, Price } from "../config/model.js";
import { costOf, type PriceLookup, requirePrice } from "./cost.js";
import { modelFetch, parseRetryAfter, type RetryEvent, withLinkedSignal } from "./retry.js";

/** What the model needs of the SDK client (lets the composition root construct it). */
type ChatClient = Pick<OpenAI, "chat">;

const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Builds the SDK client from config and environment; the API key is read from `config.apiKeyEnv`. */
export function createOpenAIClient(
  config: ModelConfig,
  env: NodeJS.ProcessEnv = process.env,
  onRetry?: (event: RetryEvent) => void,
): OpenAI {
  const baseURL = config.baseUrl ?? env.OPENAI_BASE_URL ?? OPENAI_DEFAULT_BASE_URL;
  let apiKey = env[config.apiKeyEnv];
  if (!apiKey) {
    if (baseURL === OPENAI_DEFAULT_BASE_URL) {
      throw new ConfigError(`no API key: the environment variable ${config.apiKeyEnv} is not set`, {
        code: "model_api_key_missing",
        hint: `Set ${config.apiKeyEnv}, or point model.baseUrl (or OPENAI_BASE_URL) at an endpoint that needs no key.`,
      });
    }
    apiKey = "none"; // local endpoints (Ollama, vLLM) accept any key; the SDK insists on one
  }
  return new OpenAI({
    apiKey,
    baseURL,
    organization: config.organization ?? env.OPENAI_ORG_ID ?? null,
    defaultHeaders: config.headers,
    timeout: config.timeoutMs,
    maxRetries: config.retry.maxRetries,
    fetch: modelFetch({ maxRetryAfterMs: config.retry.maxRetryAfterMs, onRetry }),
  });
}

/** What the SDK retries (and what the job may retry later): 408, 409, 429, 5xx, timeouts, connection failures. */
function isTransient(error: unknown): boolean {
  if (error instanceof OpenAI.APIUserAbortError) return false;
  if (error instanceof OpenAI.APIConnectionError) return true;
  if (!(error instanceof OpenAI.APIError)) return false;
  const status = error.status ?? 0;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

interface OpenAIModelOptions {
  client: ChatClient;
  /** The API's model name, without the `openai:` prefix. */
  model: string;
  config: ModelConfig;
}

export class OpenAIModel implements Model {
  readonly name: string;
  readonly pricing: PriceLookup & { price: Price };
  readonly costNote: string;

  constructor(private readonly options: OpenAIModelOptions) {
    this.name = `openai:${options.model}`;
    // An unpriced model is refused here: counted as free, it would run past any cost limit.
    this.pricing = requirePrice(options.config.prices, options.model);
    this.costNote = this.pricing.note;
  }

  async query(messages: ChatMessage[], tools: FunctionSpec[], signal?: AbortSignal): Promise<ModelResponse> {
    const { config } = this.options;
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.options.model,
      messages: messages as ChatCompletionCreateParamsNonStreaming["messages"],
    };
    if (tools.length > 0) body.tools = tools.map((fn) => ({ type: "function", function: fn }));
    // Reasoning models (o1, o3, o4-mini, gpt-5...) accept only their default temperature.
    if (config.temperature !== null && !isReasoningModel(this.options.model))
      body.temperature = config.temperature;
    if (config.maxOutputTokens !== null) body.max_completion_tokens = config.maxOutputTokens;

    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await withLinkedSignal(signal, (linked) =>
        this.options.client.chat.completions.create(body, { signal: linked }),
      );
    } catch (error) {
      throw toModelError(error, config.retry, signal);
    }
    const choice = completion.choices[0];
    if (!choice)
      throw new ModelError("the model API answered with no choices", { code: "model_empty_reply" });
    const message: AssistantMessage = { role: "assistant", content: choice.message.content ?? null };
    const calls: ToolCall[] = (choice.message.tool_calls ?? []).flatMap((call) =>
      call.type === "function"
        ? [
            {
              id: call.id,
              type: "function",
              function: { name: call.function.name, arguments: call.function.arguments },
            },
          ]
        : [],
    );
    if (calls.length > 0) message.tool_calls = calls;
    const usage = {
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      cachedPromptTokens: completion.usage?.prompt_tokens_details?.cached_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
    };
    return { message, usage, costUsd: costOf(usage, this.pricing.price) };
  }
}

export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-5)/.test(model.replace(/^.*\//, ""));
}

function toModelError(error: unknown, retry: ModelConfig["retry"], signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  if (isTransient(error)) {
    const retryAfterMs = error instanceof OpenAI.APIError ? parseRetryAfter(error.headers) : undefined;
    const reason =
      retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs
        ? `the server asked to wait ${Math.round(retryAfterMs / 1000)} s, more than the ${Math.round(retry.maxRetryAfterMs / 1000)} s allowed (model.retry.maxRetryAfterMs)`
        : `gave up after ${retry.maxRetries + 1} attempts`;
    return new ModelError(`the model API kept failing (${describe(error)}); ${reason}`, {
      code: "model_api_unavailable",
      retryable: true,
      cause: error,
      hint: "Try again later, or raise model.retry.maxRetries.",
    });
  }
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    return new ModelError(`the model API refused the request: ${describe(error)}`, {
      code: status === 401 || status === 403 ? "model_api_auth" : "model_api_rejected",
      retryable: false,
      cause: error,
      hint:
        status === 401 || status === 403
          ? "Check the API key (model.apiKeyEnv) and organisation."
          : "Check the model name and the endpoint (model.baseUrl).",
    });
  }
  return error;
}

function describe(error: unknown): string {
  if (error instanceof OpenAI.APIError && error.status !== undefined)
    return `HTTP ${error.status}: ${error.message}`;
  // A connection failure's own message is "Connection error."; its cause says which.
  const cause = error instanceof OpenAI.APIConnectionError ? error.cause : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return cause instanceof Error ? `${message} ${cause.message}` : message;
}
