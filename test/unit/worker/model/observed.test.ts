/** observedModel (worker/model/observed.ts): the metrics' and the monthly spend's view of each model call. */
import { describe, expect, it } from "vitest";
import type { Model, ModelResponse } from "../../../../src/shared/contracts.js";
import { observedModel } from "../../../../worker/model/observed.js";

const answer = { costUsd: 0.25 } as ModelResponse;

describe("observedModel", () => {
  it("tells each answer before returning it, and keeps the model's name and cost note", async () => {
    const model: Model = { name: "openai:x", costNote: "prices of 2026-11", query: async () => answer };
    const seen: number[] = [];
    const observed = observedModel(model, { answered: async (a) => void seen.push(a.costUsd) });
    expect(observed.name).toBe("openai:x");
    expect(observed.costNote).toBe("prices of 2026-11");
    expect(await observed.query([], [])).toBe(answer);
    expect(seen).toEqual([0.25]);
  });

  it("tells a failure with the call's signal and rethrows it; no answer is told", async () => {
    const refused = new Error("HTTP 429");
    const model: Model = {
      name: "openai:x",
      query: async () => {
        throw refused;
      },
    };
    const failures: [unknown, AbortSignal | undefined][] = [];
    const answers: ModelResponse[] = [];
    const observed = observedModel(model, {
      answered: (a) => void answers.push(a),
      failed: (error, signal) => void failures.push([error, signal]),
    });
    const signal = new AbortController().signal;
    await expect(observed.query([], [], signal)).rejects.toBe(refused);
    expect(failures).toEqual([[refused, signal]]);
    expect(answers).toEqual([]);
    expect("costNote" in observed).toBe(false);
  });
});
