/** Dollars from the API's reported usage and the dated price table of the `model:` config. */

import type { ModelConfig, Price } from "../../src/config/model.js";
import type { ModelUsage } from "../../src/contracts.js";

export interface PriceLookup {
  price: Price | null;
  /** Said in summaries: which table the figure comes from, or that the model is not in it. */
  note: string;
}

/** Exact name first, then the longest table key the name starts with (`gpt-4.1-2025-04-14` -> `gpt-4.1`). */
export function lookupPrice(prices: ModelConfig["prices"], modelName: string): PriceLookup {
  const exact = prices.models[modelName];
  if (exact) return { price: exact, note: `prices as of ${prices.asOf}` };
  const prefix = Object.keys(prices.models)
    .filter((key) => modelName.startsWith(`${key}-`))
    .sort((a, b) => b.length - a.length)[0];
  if (prefix) return { price: prices.models[prefix]!, note: `prices of ${prefix} as of ${prices.asOf}` };
  return {
    price: null,
    note: `model ${modelName} is not in the price table (model.prices.models); its cost is counted as 0`,
  };
}

export function costOf(usage: ModelUsage, price: Price | null): number {
  if (!price) return 0;
  const cached = Math.min(usage.cachedPromptTokens, usage.promptTokens);
  const uncached = usage.promptTokens - cached;
  const cachedRate = price.cachedInput ?? price.input;
  return (uncached * price.input + cached * cachedRate + usage.completionTokens * price.output) / 1_000_000;
}
