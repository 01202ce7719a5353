/**
 * Dollars from the API's reported usage and the dated price table of the `model:` config. A model
 * whose price is not known is refused (requirePrice): counting it as free would switch the cost limit
 * off, so the operator gives its price in `model.prices.models` or the run does not start.
 */

import type { ModelUsage } from "../../src/shared/contracts.js";
import { ConfigError } from "../../src/shared/errors.js";
import type { ModelConfig, Price } from "../config/model.js";

export interface PriceLookup {
  price: Price | null;
  /** Said in summaries: which table the figure comes from, or that the model is not in it. */
  note: string;
}

/** A dated snapshot of a model: `gpt-4.1-2025-04-14` is `gpt-4.1` (never `o3-pro` as `o3`). */
const SNAPSHOT_SUFFIX = /-\d{4}-\d{2}-\d{2}$/;

/** The exact name, or the model a dated snapshot name is a snapshot of; never a mere prefix. */
export function lookupPrice(prices: ModelConfig["prices"], modelName: string): PriceLookup {
  const exact = prices.models[modelName];
  if (exact) return { price: exact, note: `prices as of ${prices.asOf}` };
  const base = modelName.replace(SNAPSHOT_SUFFIX, "");
  const snapshotOf = base !== modelName ? prices.models[base] : undefined;
  if (snapshotOf) return { price: snapshotOf, note: `prices of ${base} as of ${prices.asOf}` };
  return { price: null, note: `model ${modelName} is not in the price table (model.prices.models)` };
}

/** The price of `modelName`, or a ConfigError naming the model and the setting that gives it. */
export function requirePrice(
  prices: ModelConfig["prices"],
  modelName: string,
): PriceLookup & { price: Price } {
  const found = lookupPrice(prices, modelName);
  if (found.price) return { ...found, price: found.price };
  throw new ConfigError(
    `The model openai:${modelName} has no known price, so its cost limit could not be enforced; the run was not started`,
    {
      code: "model_price_unknown",
      hint:
        `Give its price (US dollars per million tokens) in the operator's config (AGENT_FIX_CONFIG or --config), e.g.\n` +
        `model:\n  prices:\n    models:\n      ${modelName}: { input: 2, cachedInput: 0.5, output: 8 }`,
    },
  );
}

export function costOf(usage: ModelUsage, price: Price): number {
  const cached = Math.min(usage.cachedPromptTokens, usage.promptTokens);
  const uncached = usage.promptTokens - cached;
  const cachedRate = price.cachedInput ?? price.input;
  return (uncached * price.input + cached * cachedRate + usage.completionTokens * price.output) / 1_000_000;
}
