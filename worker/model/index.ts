/**
 * Models by name: `openai:NAME` (any OpenAI-compatible endpoint) or `replay:FILE`.
 * Called by the composition roots (worker/cli.ts, worker/main.ts).
 */

import type { Model } from "../../src/shared/contracts.js";
import { ConfigError } from "../../src/shared/errors.js";
import type { ModelConfig } from "../config/model.js";
import { createOpenAIClient, OpenAIModel } from "./openai.js";
import { ReplayModel } from "./replay.js";
import type { RetryEvent } from "./retry.js";

interface CreateModelOptions {
  config: ModelConfig;
  env?: NodeJS.ProcessEnv;
  onRetry?: (event: RetryEvent) => void;
}

/** `spec` overrides `config.name`; a name without a known prefix is a config error. */
export async function createModel(spec: string | undefined, options: CreateModelOptions): Promise<Model> {
  const name = spec ?? options.config.name;
  const colon = name.indexOf(":");
  const kind = colon > 0 ? name.slice(0, colon) : "";
  const rest = colon > 0 ? name.slice(colon + 1) : "";
  if (kind === "replay" && rest) return ReplayModel.fromFile(rest);
  if (kind === "openai" && rest) {
    const client = createOpenAIClient(options.config, options.env, options.onRetry);
    return new OpenAIModel({ client, model: rest, config: options.config });
  }
  throw new ConfigError(`unknown model "${name}"`, {
    code: "model_name_invalid",
    hint: "Use openai:NAME (e.g. openai:gpt-4.1, or any model of an OpenAI-compatible endpoint) or replay:FILE.",
  });
}
