/**
 * Schema of the `model:` section of config/default.yaml: which model, how to reach its endpoint,
 * how to retry transient failures, and the dated price table that turns usage into dollars.
 */
import { z } from "zod";

/** Dollars per million tokens. `cachedInput` defaults to `input` when a provider has no cache discount. */
export const priceSchema = z
  .strictObject({
    input: z.number().nonnegative().describe("USD per million input tokens."),
    cachedInput: z
      .number()
      .nonnegative()
      .optional()
      .describe("USD per million cached input tokens; `input` when not given."),
    output: z.number().nonnegative().describe("USD per million output tokens."),
  })
  .describe("A model's prices, in USD per million tokens.");
export type Price = z.infer<typeof priceSchema>;

/** The openai SDK retries with its own backoff (0.5 s doubling to 8 s, jittered) or the server's Retry-After. */
const retrySchema = z
  .strictObject({
    maxRetries: z
      .number()
      .int()
      .min(0)
      .max(20)
      .default(5)
      .describe("Retries after the first attempt; 0 disables retrying."),
    maxRetryAfterMs: z
      .number()
      .int()
      .min(0)
      .default(120_000)
      .describe(
        "A Retry-After longer than this ends the retries instead of waiting (a provider's daily cap, say).",
      ),
  })
  .describe(
    "Retries of 429s, 5xx, timeouts and connection resets, with the openai SDK's backoff (0.5 s doubling to 8 s) or the server's Retry-After.",
  );

export const modelConfigSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^(openai|replay):.+$/, "must look like openai:NAME or replay:FILE")
      .default("openai:gpt-4.1")
      .describe(
        "The model runs use: `openai:NAME` (any OpenAI-compatible endpoint) or `replay:FILE` (a recorded run).",
      ),
    baseUrl: z
      .string()
      .url()
      .nullable()
      .default(null)
      .describe("OpenAI-compatible endpoint; null: OPENAI_BASE_URL, else https://api.openai.com/v1."),
    apiKeyEnv: z
      .string()
      .min(1)
      .default("OPENAI_API_KEY")
      .describe(
        "Name of the environment variable that holds the API key (the key itself never goes in config).",
      ),
    organization: z
      .string()
      .nullable()
      .default(null)
      .describe("The OpenAI organization sent with requests; null: OPENAI_ORG_ID when set."),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe("Extra HTTP headers for every request (e.g. OpenRouter's HTTP-Referer)."),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .default(300_000)
      .describe("One request to the model times out after this."),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .nullable()
      .default(0)
      .describe(
        "Sampling temperature; not sent to reasoning models (o1, o3, o4-mini, gpt-5), which refuse it; null: not sent.",
      ),
    maxOutputTokens: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe("Tokens one reply may hold at most; null: the endpoint's own limit."),
    retry: retrySchema.prefault({}),
    prices: z
      .strictObject({
        asOf: z
          .string()
          .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD")
          .describe("The day the figures were checked; printed with every cost so stale prices are visible."),
        models: z
          .record(z.string(), priceSchema)
          .describe(
            "Prices by model name without the `openai:` prefix (a dated snapshot matches its model); a run of a model not listed is refused, so the cost limit always holds.",
          ),
      })
      .default({ asOf: "1970-01-01", models: {} })
      .describe(
        "The price table that turns usage into dollars; an overlay adds models or overrides entries.",
      ),
  })
  .describe(
    "Which model, how to reach its endpoint, how to retry transient failures, and the dated price table that turns usage into dollars (worker/model/).",
  );
export type ModelConfig = z.infer<typeof modelConfigSchema>;
