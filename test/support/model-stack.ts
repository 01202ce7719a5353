/**
 * A Stack whose operator model is the OpenAI-compatible stand-in (repositories whose config names no
 * model, sampleConfig(null), use it), and the sample's recorded fix as that stand-in's script: what the
 * tests of metrics, publishing and the model's rate limit share.
 */
import { readFileSync } from "node:fs";
import { type OpenAIStandIn, type ScriptedReply, startOpenAIStandIn } from "./openai-server.js";
import { Stack, type StackOptions } from "./stack.js";
import { SAMPLE_REPLAY } from "./stack-parts.js";

interface RecordedTurn {
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

/** The sample's recorded fix (test/fixtures/replay/sample-median.jsonl) as scripted replies, one per model call. */
export function sampleFixReplies(): ScriptedReply[] {
  return recordedReplies(SAMPLE_REPLAY);
}

/** A recorded replay (one assistant turn per line, e.g. test/fixtures/replay/*.jsonl) as scripted replies. */
export function recordedReplies(file: string): ScriptedReply[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => {
      const turn = JSON.parse(line) as RecordedTurn;
      const toolCalls = (turn.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      return { kind: "message", content: turn.content, toolCalls };
    });
}

/**
 * The stack (not started) and how to start and stop it with its model stand-in: `start` starts the
 * stand-in, points the stack's OPENAI_BASE_URL at it, starts the stack and returns the stand-in.
 */
export function stackWithModelStandIn(options: Omit<StackOptions, "model"> = {}) {
  const env: Record<string, string> = { ...options.env };
  const stack = new Stack({ ...options, model: null, env });
  let model: OpenAIStandIn | undefined;
  return {
    stack,
    async start(): Promise<OpenAIStandIn> {
      model = await startOpenAIStandIn();
      env.OPENAI_BASE_URL = model.url;
      await stack.start();
      return model;
    },
    async stop(): Promise<void> {
      await stack.stop();
      await model?.close();
    },
  };
}
