/**
 * The replay model: returns recorded assistant turns in order, at zero cost. FILE holds OpenAI
 * chat-completion assistant messages, one per turn, as a JSON array or as JSON Lines. Tests and
 * the demo run on it.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import type {
  AssistantMessage,
  ChatMessage,
  FunctionSpec,
  Model,
  ModelResponse,
} from "../../src/shared/contracts.js";
import { ConfigError, ModelError } from "../../src/shared/errors.js";
import { estimateMessageTokens, estimatePromptTokens } from "./tokens.js";

const toolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal("function").default("function"),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

const turnSchema = z.object({
  role: z.literal("assistant").default("assistant"),
  content: z.string().nullable().default(null),
  tool_calls: z.array(toolCallSchema).optional(),
});

/** Parses a replay file's text; `source` names it in errors. */
export function parseReplayTurns(text: string, source: string): AssistantMessage[] {
  const trimmed = text.trim();
  let raw: { value: unknown; where: string }[];
  if (trimmed.startsWith("[")) {
    let array: unknown;
    try {
      array = JSON.parse(trimmed);
    } catch (error) {
      throw replayError(source, `is not valid JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(array)) throw replayError(source, "must be a JSON array or JSON Lines");
    raw = array.map((value, index) => ({ value, where: `turn ${index + 1}` }));
  } else {
    raw = [];
    for (const [index, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue;
      try {
        raw.push({ value: JSON.parse(line), where: `line ${index + 1}` });
      } catch (error) {
        throw replayError(source, `line ${index + 1} is not valid JSON: ${(error as Error).message}`);
      }
    }
  }
  return raw.map(({ value, where }) => {
    const parsed = turnSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw replayError(source, `${where}: ${issue.path.join(".") || "(turn)"}: ${issue.message}`);
    }
    const message: AssistantMessage = { role: "assistant", content: parsed.data.content };
    if (parsed.data.tool_calls?.length) message.tool_calls = parsed.data.tool_calls;
    return message;
  });
}

function replayError(source: string, what: string): ConfigError {
  return new ConfigError(`replay file ${source} ${what}`, {
    code: "replay_file_invalid",
    hint: 'Each turn is an assistant message: {"role":"assistant","content":"...","tool_calls":[...]}.',
  });
}

export class ReplayModel implements Model {
  readonly name: string;
  readonly costNote = "replayed turns cost nothing";
  private next = 0;

  constructor(
    private readonly turns: readonly AssistantMessage[],
    source: string,
  ) {
    this.name = `replay:${source}`;
  }

  static async fromFile(path: string): Promise<ReplayModel> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      throw new ConfigError(`cannot read replay file ${path}: ${(error as Error).message}`, {
        code: "replay_file_unreadable",
      });
    }
    return new ReplayModel(parseReplayTurns(text, path), path);
  }

  get remaining(): number {
    return this.turns.length - this.next;
  }

  async query(messages: ChatMessage[], tools: FunctionSpec[], signal?: AbortSignal): Promise<ModelResponse> {
    signal?.throwIfAborted();
    const turn = this.turns[this.next];
    if (!turn) {
      throw new ModelError(`the replay file has no turn ${this.next + 1} (it holds ${this.turns.length})`, {
        code: "replay_exhausted",
      });
    }
    this.next++;
    const message = structuredClone(turn);
    const usage = {
      promptTokens: estimatePromptTokens(messages, tools),
      cachedPromptTokens: 0,
      completionTokens: estimateMessageTokens(message),
    };
    return { message, usage, costUsd: 0 };
  }
}
