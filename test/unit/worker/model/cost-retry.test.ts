import { describe, expect, it } from "vitest";
import { modelConfigSchema } from "../../../../worker/config/model.js";
import { costOf, lookupPrice, requirePrice } from "../../../../worker/model/cost.js";
import { createOpenAIClient, OpenAIModel } from "../../../../worker/model/openai.js";
import { parseRetryAfter } from "../../../../worker/model/retry.js";

const prices = {
  asOf: "2025-08-15",
  models: { "gpt-4.1": { input: 2, output: 8 }, "gpt-4.1-mini": { input: 0.4, output: 1.6 } },
};

describe("price table", () => {
  it("matches exact names and dated snapshots of a listed model, never a mere prefix", () => {
    expect(lookupPrice(prices, "gpt-4.1-mini").price?.input).toBe(0.4);
    expect(lookupPrice(prices, "gpt-4.1-mini-2025-04-14").price?.input).toBe(0.4);
    expect(lookupPrice(prices, "gpt-4.1-2025-04-14").note).toBe("prices of gpt-4.1 as of 2025-08-15");
    const o3 = { asOf: "2025-08-15", models: { o3: { input: 2, output: 8 } } };
    // o3-pro is a different, dearer model: priced as o3 it would run ten times past the cost limit.
    expect(lookupPrice(o3, "o3-pro").price).toBeNull();
    expect(lookupPrice(o3, "o3-pro-2025-06-10").price).toBeNull();
    expect(lookupPrice(o3, "o3-2025-04-16").price?.input).toBe(2);
    expect(lookupPrice(prices, "gpt-4.1-nano").price).toBeNull();
    const unknown = lookupPrice(prices, "llama3");
    expect(unknown.price).toBeNull();
    expect(unknown.note).toContain("not in the price table");
  });

  it("a model without a known price is refused, naming the model and the setting to give it", () => {
    const config = modelConfigSchema.parse({ prices });
    const build = (model: string) =>
      new OpenAIModel({
        client: createOpenAIClient(config, { OPENAI_BASE_URL: "http://127.0.0.1:1/v1" }),
        model,
        config,
      });
    const error = (() => {
      try {
        build("o1-pro");
      } catch (caught) {
        return caught as Error & { code?: string; hint?: string };
      }
      return null;
    })();
    expect(error?.code).toBe("model_price_unknown");
    expect(error?.message).toContain("openai:o1-pro has no known price");
    expect(error?.hint).toContain("model:\n  prices:\n    models:\n      o1-pro:");
    expect(() => requirePrice(prices, "o1-pro")).toThrow(/openai:o1-pro/);
    expect(build("gpt-4.1-2025-04-14").costNote).toBe("prices of gpt-4.1 as of 2025-08-15");
  });

  it("charges cached input at the input rate when no cached rate is given", () => {
    const usage = { promptTokens: 1_000_000, cachedPromptTokens: 500_000, completionTokens: 0 };
    expect(costOf(usage, { input: 2, output: 8 })).toBe(2);
    expect(costOf(usage, { input: 2, cachedInput: 0.5, output: 8 })).toBe(1.25);
  });
});

describe("Retry-After", () => {
  it("reads Retry-After as seconds, as an HTTP date, and retry-after-ms", () => {
    const headers = (entries: Record<string, string>) => new Headers(entries);
    expect(parseRetryAfter(headers({ "retry-after": "3" }))).toBe(3000);
    expect(parseRetryAfter(headers({ "retry-after-ms": "250", "retry-after": "3" }))).toBe(250);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), now)).toBe(10_000);
    expect(parseRetryAfter(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(parseRetryAfter(headers({}))).toBeUndefined();
  });
});
