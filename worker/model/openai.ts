/**
 * A Model over the official openai SDK: OpenAI itself and any OpenAI-compatible endpoint
 * (vLLM, Ollama, LiteLLM, OpenRouter, Azure's v1 API). The SDK runs with maxRetries 0; retries are ours.
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
} from "../../src/contracts.js";
import { ConfigError, ModelError } from "../../src/errors.js";
import type { ModelConfig, Price } from "../config/model.js";
import { costOf, type PriceLookup, requirePrice } from "./cost.js";
import {
  parseRetryAfter,
  type RetryDecision,
  type RetryEvent,
  RetryGaveUp,
  withLinkedSignal,
  withRetries,
} from "./retry.js";

/** What the model needs of the SDK client (lets the composition root construct it). */
export type ChatClient = Pick<OpenAI, "chat">;

const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Builds the SDK client from config and environment; the API key is read from `config.apiKeyEnv`. */
export function createOpenAIClient(config: ModelConfig, env: NodeJS.ProcessEnv = process.env): OpenAI {
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
    maxRetries: 0,
  });
}

/** 408, 409, 429, 5xx, timeouts and connection failures are transient; the rest are not. */
export function classifyOpenAIError(error: unknown): RetryDecision {
  if (error instanceof OpenAI.APIUserAbortError) return { retryable: false };
  if (error instanceof OpenAI.APIConnectionError) return { retryable: true };
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? 0;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const retryAfterMs = parseRetryAfter(error.headers);
    return retryAfterMs === undefined ? { retryable } : { retryable, retryAfterMs };
  }
  return { retryable: false };
}

export interface OpenAIModelOptions {
  client: ChatClient;
  /** The API's model name, without the `openai:` prefix. */
  model: string;
  config: ModelConfig;
  onRetry?: (event: RetryEvent) => void;
  /** Injected for tests of the backoff; default is a real timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
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
      completion = await withRetries(
        () =>
          withLinkedSignal(signal, (linked) =>
            this.options.client.chat.completions.create(body, { signal: linked, maxRetries: 0 }),
          ),
        {
          config: config.retry,
          classify: classifyOpenAIError,
          ...(signal ? { signal } : {}),
          ...(this.options.onRetry ? { onRetry: this.options.onRetry } : {}),
          ...(this.options.sleep ? { sleep: this.options.sleep } : {}),
        },
      );
    } catch (error) {
      throw toModelError(error, signal);
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

function toModelError(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  if (error instanceof RetryGaveUp) {
    return new ModelError(`the model API kept failing (${describe(error.lastError)}); ${error.reason}`, {
      code: "model_api_unavailable",
      retryable: true,
      cause: error.lastError,
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
  return error instanceof Error ? error.message : String(error);
}
