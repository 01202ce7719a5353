/**
 * Schema of the `model:` section of config/default.yaml: which model, how to reach its endpoint,
 * how to retry transient failures, and the dated price table that turns usage into dollars.
 */
import { z } from "zod";

/** Dollars per million tokens. `cachedInput` defaults to `input` when a provider has no cache discount. */
export const priceSchema = z.strictObject({
  input: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
  output: z.number().nonnegative(),
});
export type Price = z.infer<typeof priceSchema>;

/** The openai SDK retries with its own backoff (0.5 s doubling to 8 s, jittered) or the server's Retry-After. */
const retrySchema = z.strictObject({
  /** Retries after the first attempt; 0 disables retrying. */
  maxRetries: z.number().int().min(0).max(20).default(5),
  /** A Retry-After longer than this ends the retries instead of waiting (a provider's daily cap, say). */
  maxRetryAfterMs: z.number().int().min(0).default(120_000),
});

export const modelConfigSchema = z.strictObject({
  /** `openai:NAME` (any OpenAI-compatible endpoint) or `replay:FILE`. */
  name: z
    .string()
    .regex(/^(openai|replay):.+$/, "must look like openai:NAME or replay:FILE")
    .default("openai:gpt-4.1"),
  /** OpenAI-compatible endpoint; null = OPENAI_BASE_URL, else api.openai.com. */
  baseUrl: z.string().url().nullable().default(null),
  /** Name of the environment variable that holds the API key (the key itself never goes in config). */
  apiKeyEnv: z.string().min(1).default("OPENAI_API_KEY"),
  /** null = OPENAI_ORG_ID when set. */
  organization: z.string().nullable().default(null),
  /** Extra HTTP headers for every request (e.g. OpenRouter's HTTP-Referer). */
  headers: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().default(300_000),
  temperature: z.number().min(0).max(2).nullable().default(0),
  maxOutputTokens: z.number().int().positive().nullable().default(null),
  retry: retrySchema.prefault({}),
  prices: z
    .strictObject({
      /** The day the figures were checked; printed with every cost so stale prices are visible. */
      asOf: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD"),
      /** Keyed by model name without the `openai:` prefix; a user config adds or overrides entries. */
      models: z.record(z.string(), priceSchema),
    })
    .default({ asOf: "1970-01-01", models: {} }),
});
export type ModelConfig = z.infer<typeof modelConfigSchema>;
