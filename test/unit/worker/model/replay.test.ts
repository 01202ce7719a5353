import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, ModelError } from "../../../../src/shared/errors.js";
import { modelConfigSchema } from "../../../../worker/config/model.js";
import { createModel } from "../../../../worker/model/index.js";
import { parseReplayTurns, ReplayModel } from "../../../../worker/model/replay.js";

const call = {
  role: "assistant",
  content: "look",
  tool_calls: [{ id: "c1", type: "function", function: { name: "open", arguments: '{"path":"a.py"}' } }],
};

describe("replay model", () => {
  it("reads a JSON array and JSON Lines alike, and returns turns in order at zero cost", async () => {
    const dir = await mkdtemp(join(tmpdir(), "replay-"));
    await writeFile(join(dir, "a.json"), JSON.stringify([call, { role: "assistant", content: "two" }]));
    await writeFile(join(dir, "b.jsonl"), `${JSON.stringify(call)}\n\n{"content":"two"}\n`);
    for (const file of ["a.json", "b.jsonl"]) {
      const model = await ReplayModel.fromFile(join(dir, file));
      expect(model.name).toBe(`replay:${join(dir, file)}`);
      const first = await model.query([{ role: "user", content: "x".repeat(400) }], []);
      expect(first.message).toEqual(call);
      expect(first.costUsd).toBe(0);
      expect(first.usage.promptTokens).toBeGreaterThanOrEqual(100);
      expect((await model.query([], [])).message).toEqual({ role: "assistant", content: "two" });
      const error = await model.query([], []).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelError);
      expect((error as ModelError).code).toBe("replay_exhausted");
    }
  });

  it("names the file and the line of a bad turn", () => {
    expect(() => parseReplayTurns('{"content":"a"}\n{"content": 5}\n', "t.jsonl")).toThrow(
      /replay file t\.jsonl line 2: content/,
    );
    expect(() => parseReplayTurns('{"content":"a"}\nnot json\n', "t.jsonl")).toThrow(
      /line 2 is not valid JSON/,
    );
    expect(() => parseReplayTurns("[1,", "t.json")).toThrow(ConfigError);
  });

  it("createModel rejects a name without openai: or replay:", async () => {
    const error = await createModel("gpt-4.1", { config: modelConfigSchema.parse({}) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain('unknown model "gpt-4.1"');
  });
});
