import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Sandbox } from "../../../../src/shared/contracts.js";
import { modelConfigSchema } from "../../../../worker/config/model.js";
import { createOpenAIClient, OpenAIModel } from "../../../../worker/model/openai.js";
import {
  message,
  type OpenAIStandIn,
  type ScriptedReply,
  startOpenAIStandIn,
} from "../../../support/openai-server.js";
import { runEpisode } from "./harness.js";

const sandboxes: Sandbox[] = [];
let server: OpenAIStandIn;
beforeAll(async () => {
  server = await startOpenAIStandIn();
});
afterAll(async () => {
  await server.close();
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.dispose()));
});
beforeEach(() => {
  server.requests.length = 0;
});

function model() {
  const config = modelConfigSchema.parse({
    baseUrl: server.url,
    prices: { asOf: "2025-08-15", models: { "gpt-test": { input: 2, cachedInput: 0.5, output: 8 } } },
    retry: { maxRetries: 2 },
  });
  return new OpenAIModel({ client: createOpenAIClient(config, {}), model: "gpt-test", config });
}

const fix = "    if not values:\n        return 0\n    return sum(values) / len(values)";
const million = { prompt_tokens: 1_000_000, completion_tokens: 0 };
const call = (
  name: string,
  args: Record<string, unknown> | string,
  usage?: typeof million,
): ScriptedReply => ({
  kind: "message",
  content: `calling ${name}`,
  toolCalls: [{ name, arguments: args }],
  ...(usage ? { usage } : {}),
});

describe("the loop with the real openai SDK against the stand-in server", () => {
  it("function calling: sends the ACI's tools, answers each call with a tool message, and submits", async () => {
    server.enqueue(
      call("open", { path: "calc/ops.py" }),
      call("edit", '{"start_line": 3, "end_line": 3, "replacement_text": "oops"'), // malformed JSON
      call("edit", { start_line: 3, end_line: 3, replacement_text: fix }),
      call("submit", {}),
      call("submit", {}),
    );
    const { trajectory } = await runEpisode({ model: model(), cleanup: sandboxes });
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.submission).toContain("+        return 0");
    expect(trajectory.info.model).toBe("openai:gpt-test");
    expect(trajectory.info.cost_note).toBe("prices as of 2025-08-15");
    expect(trajectory.info.model_stats.api_calls).toBe(5);
    const first = server.requests[0]!.body;
    const toolNames = (first.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(toolNames).toEqual(expect.arrayContaining(["open", "edit", "search_dir", "bash", "submit"]));
    const second = server.requests[1]!.body.messages as {
      role: string;
      tool_call_id?: string;
      content: string;
    }[];
    expect(second.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(second.at(-1)!.content).toContain("[File: calc/ops.py (8 lines total)]");
    // The malformed call was answered with the error, then left the history once the model recovered.
    const third = JSON.stringify(server.requests[2]!.body.messages);
    expect(third).toContain("not valid JSON");
    const fourth = JSON.stringify(server.requests[3]!.body.messages);
    expect(fourth).not.toContain("not valid JSON");
  });

  it("thought_action: sends no tools and reads the fenced command", async () => {
    server.enqueue(
      message("Look first.\n```\nopen calc/ops.py\n```"),
      message(`Fix.\n\`\`\`\nedit 3:3\n${fix}\nend_of_edit\n\`\`\``),
      message("```\nsubmit\n```"),
      message("```\nsubmit\n```"),
    );
    const { trajectory } = await runEpisode({
      model: model(),
      agent: { actionFormat: "thought_action" },
      cleanup: sandboxes,
    });
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(server.requests.every((request) => request.body.tools === undefined)).toBe(true);
    const second = server.requests[1]!.body.messages as { role: string; content: string }[];
    expect(second.at(-1)!.role).toBe("user");
    expect(second.at(-1)!.content).toContain("1:def mean(values):");
  });

  it("the cost limit ends the run from the API's reported usage, keeping the diff", async () => {
    server.enqueue(
      call("open", { path: "calc/ops.py" }, million),
      call("edit", { start_line: 3, end_line: 3, replacement_text: fix }, million),
    );
    const { trajectory } = await runEpisode({ model: model(), cleanup: sandboxes });
    expect(trajectory.info.model_stats.instance_cost).toBe(4); // 2 x 1M prompt tokens at $2/M
    expect(trajectory.info.exit_status).toBe("submitted (exit_cost)");
    expect(trajectory.info.submission).toContain("+        return 0");
    expect(server.requests).toHaveLength(2); // the limit is checked before the third call
  });

  it("a reply whose connection drops mid-body is retried and the run goes on to submit", async () => {
    server.enqueue(
      call("open", { path: "calc/ops.py" }),
      { kind: "drop-mid-body" },
      call("edit", { start_line: 3, end_line: 3, replacement_text: fix }),
      call("submit", {}),
      call("submit", {}),
    );
    const { trajectory } = await runEpisode({ model: model(), cleanup: sandboxes });
    expect(trajectory.info.exit_status).toBe("submitted");
    expect(trajectory.info.submission).toContain("+        return 0");
    expect(server.requests).toHaveLength(5);
    expect(server.remaining()).toBe(0);
  });

  it("an API that keeps failing ends the run with exit_api after the retries, keeping the diff", async () => {
    server.enqueue(
      call("open", { path: "calc/ops.py" }),
      { kind: "error", status: 429, retryAfterMs: "10" },
      call("edit", { start_line: 3, end_line: 3, replacement_text: fix }),
      { kind: "error", status: 500 },
      { kind: "error", status: 502 },
      { kind: "error", status: 503 },
    );
    const { trajectory } = await runEpisode({ model: model(), cleanup: sandboxes });
    expect(trajectory.info.exit_status).toBe("submitted (exit_api)");
    expect(trajectory.info.error).toContain("HTTP 503");
    expect(trajectory.info.submission).toContain("+        return 0");
    expect(trajectory.trajectory).toHaveLength(2);
    expect(server.requests).toHaveLength(6);
    expect(server.remaining()).toBe(0);
  });
});
