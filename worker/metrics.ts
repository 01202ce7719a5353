/**
 * The worker's side of the Prometheus metrics (src/shared/metrics/registry.ts): each run's outcome and
 * duration and its wait in the queue, the model's tokens, cost and errors, sandbox start times. Wrappers
 * the composition root puts around the parts, so the parts themselves know nothing of metrics.
 */
import type { Model, Sandbox, SandboxProvider } from "../src/shared/contracts.js";
import { metrics } from "../src/shared/metrics/registry.js";
import { observedModel } from "./model/observed.js";
import type { RetryEvent } from "./model/retry.js";

/** `model` with each answer's tokens and cost counted for `installation` (and spent), and its failures. */
export function meteredModel(
  model: Model,
  installation: number,
  spend?: (costUsd: number) => Promise<void>,
): Model {
  const labels = { model: model.name, installation: String(installation) };
  return observedModel(model, {
    answered: async (answer) => {
      metrics.modelTokens.inc({ ...labels, kind: "prompt" }, answer.usage.promptTokens);
      metrics.modelTokens.inc({ ...labels, kind: "cached_prompt" }, answer.usage.cachedPromptTokens);
      metrics.modelTokens.inc({ ...labels, kind: "completion" }, answer.usage.completionTokens);
      metrics.modelCost.inc(labels, answer.costUsd);
      // The installation's monthly budget, as each call is billed (one wrapper: one frame, one order).
      await spend?.(answer.costUsd);
    },
    failed: (error, signal) => {
      // A cancel is no failure of the model's.
      if (!signal?.aborted) metrics.modelErrors.inc({ model: model.name, reason: failureReason(error) });
    },
  });
}

/** Counts the failed attempt each retry of the model API follows (the last failure is meteredModel's). */
export function countModelRetry(model: string): (event: RetryEvent) => void {
  return (event) => {
    const status = /^HTTP (\d{3})\b/.exec(event.reason)?.[1];
    metrics.modelErrors.inc({ model, reason: status ?? "connection" });
  };
}

/** An HTTP status found on the error or its causes, else its code (model_empty_reply, ...). */
function failureReason(error: unknown): string {
  for (
    let e = error as { status?: unknown; cause?: unknown; code?: unknown } | undefined, i = 0;
    e && i < 5;
    i++
  ) {
    if (typeof e.status === "number") return String(e.status);
    e = e.cause as typeof e;
  }
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : "error";
}

/** Whether a standby sandbox served the start (sandbox/docker/standby.ts marks its start-up phases). */
function startedFrom(sandbox: Sandbox): "standby" | "fresh" {
  return sandbox.startupPhases && "standby" in sandbox.startupPhases ? "standby" : "fresh";
}

/**
 * `provider` with the time each sandbox takes to start recorded. A proxy over the provider, not a copy
 * of its members: everything but `create` (kept environments, and whatever a provider gains later) is
 * the provider's own, so the wrapper cannot drop a member (a copy once dropped `environments`, and warm
 * start was silently off).
 */
export function meteredSandboxes<Provider extends SandboxProvider>(provider: Provider): Provider {
  const create: SandboxProvider["create"] = async (options) => {
    const started = performance.now();
    const sandbox = await provider.create(options);
    metrics.sandboxStart.observe({ driver: provider.driver }, (performance.now() - started) / 1000);
    metrics.sandboxStarts.inc({ driver: provider.driver, from: startedFrom(sandbox) });
    return sandbox;
  };
  // A run's own provider is metered too.
  const forRun = provider.forRun
    ? (jobId: string) => meteredSandboxes((provider.forRun as (id: string) => SandboxProvider)(jobId))
    : undefined;
  return new Proxy(provider, {
    get(target, key) {
      if (key === "create") return create;
      if (key === "forRun") return forRun;
      const value: unknown = Reflect.get(target, key, target);
      // A method runs on the provider itself (its private fields are not the proxy's).
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
