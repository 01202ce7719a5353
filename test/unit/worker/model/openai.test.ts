import { getEventListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, ModelError } from "../../../../src/shared/errors.js";
import { type ModelConfig, modelConfigSchema } from "../../../../worker/config/model.js";
import { createOpenAIClient, isReasoningModel, OpenAIModel } from "../../../../worker/model/openai.js";
import type { RetryEvent } from "../../../../worker/model/retry.js";
import { message, type OpenAIStandIn, startOpenAIStandIn } from "../../../support/openai-server.js";

const tools = [
  {
    name: "open",
    description: "Open a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

let server: OpenAIStandIn;
beforeAll(async () => {
  server = await startOpenAIStandIn();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  expect(server.remaining()).toBe(0);
});

function config(overrides: Record<string, unknown> = {}): ModelConfig {
  return modelConfigSchema.parse({
    baseUrl: server.url,
    apiKeyEnv: "STAND_IN_KEY",
    headers: { "x-team": "agent-fix" },
    prices: {
      asOf: "2025-08-15",
      models: {
        "gpt-test": { input: 2, cachedInput: 0.5, output: 8 },
        "o4-mini": { input: 1.1, output: 4.4 },
      },
    },
    retry: { maxRetries: 3 },
    ...overrides,
  });
}

function model(cfg = config(), events: RetryEvent[] = []) {
  const client = createOpenAIClient(cfg, { STAND_IN_KEY: "sk-test-123" }, (event) => events.push(event));
  return new OpenAIModel({ client, model: "gpt-test", config: cfg });
}

/** Milliseconds between the arrival of request `index - 1` and request `index`. */
const gapBefore = (index: number) =>
  server.requests[index]!.receivedAt - server.requests[index - 1]!.receivedAt;

const conversation = [
  { role: "system" as const, content: "You fix bugs." },
  { role: "user" as const, content: "Fix it." },
];

describe("OpenAIModel over the real openai SDK", () => {
  it("sends tools, key and headers, and returns the tool call with usage and cost", async () => {
    server.enqueue({
      kind: "message",
      content: "Let me look.",
      toolCalls: [{ id: "c1", name: "open", arguments: { path: "src/a.py" } }],
      usage: { prompt_tokens: 1_000_000, completion_tokens: 100_000, cached_tokens: 400_000 },
    });
    const reply = await model().query(conversation, tools);
    expect(reply.message).toEqual({
      role: "assistant",
      content: "Let me look.",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "open", arguments: '{"path":"src/a.py"}' } },
      ],
    });
    expect(reply.usage).toEqual({
      promptTokens: 1_000_000,
      cachedPromptTokens: 400_000,
      completionTokens: 100_000,
    });
    // 600k uncached * $2 + 400k cached * $0.5 + 100k out * $8 per million
    expect(reply.costUsd).toBeCloseTo(1.2 + 0.2 + 0.8, 9);
    const request = server.requests[0]!;
    expect(request.headers.authorization).toBe("Bearer sk-test-123");
    expect(request.headers["x-team"]).toBe("agent-fix");
    expect(request.body.model).toBe("gpt-test");
    expect(request.body.tools).toEqual([{ type: "function", function: tools[0] }]);
    expect(request.body.messages).toEqual(conversation);
  });

  it("leaves temperature out for reasoning models, which accept only their default", async () => {
    server.enqueue(message("a"), message("b"));
    await model().query(conversation, tools);
    expect(server.requests[0]!.body.temperature).toBe(0);
    const cfg = config();
    const reasoning = new OpenAIModel({
      client: createOpenAIClient(cfg, { STAND_IN_KEY: "k" }),
      model: "o4-mini",
      config: cfg,
    });
    await reasoning.query(conversation, tools);
    expect(server.requests[1]!.body).not.toHaveProperty("temperature");
    expect(isReasoningModel("gpt-5-mini")).toBe(true);
    expect(isReasoningModel("openrouter/openai/o3")).toBe(true);
    expect(isReasoningModel("gpt-4.1")).toBe(false);
  });

  it("sends no tools in text mode and passes malformed tool-call JSON through for the loop to judge", async () => {
    server.enqueue(message("thinking", { id: "c9", name: "open", arguments: '{"path": "src/a.py"' }));
    const reply = await model().query(conversation, []);
    expect(server.requests[0]!.body.tools).toBeUndefined();
    expect(reply.message.tool_calls?.[0]?.function.arguments).toBe('{"path": "src/a.py"');
  });

  it("retries a 429 after the server's Retry-After, then succeeds", async () => {
    const events: RetryEvent[] = [];
    server.enqueue({ kind: "error", status: 429, retryAfter: "1" }, message("done"));
    const reply = await model(config(), events).query(conversation, tools);
    expect(reply.message.content).toBe("done");
    expect(server.requests).toHaveLength(2);
    expect(gapBefore(1)).toBeGreaterThanOrEqual(950); // the wait asked for, not the SDK's 0.5 s
    expect(events).toEqual([{ attempt: 1, reason: "HTTP 429" }]);
  });

  it("retries 500, 502 and 503 (retry-after-ms honoured when sent)", async () => {
    const events: RetryEvent[] = [];
    server.enqueue(
      { kind: "error", status: 500 },
      { kind: "error", status: 502 },
      { kind: "error", status: 503, retryAfterMs: "300" },
      message("ok"),
    );
    await model(config(), events).query(conversation, tools);
    expect(server.requests).toHaveLength(4);
    expect(gapBefore(3)).toBeGreaterThanOrEqual(290);
    expect(events.map((event) => event.reason)).toEqual(["HTTP 500", "HTTP 502", "HTTP 503"]);
  });

  it("gives up after maxRetries with a retryable ModelError (the loop's exit_api)", async () => {
    server.enqueue(
      ...Array.from({ length: 4 }, () => ({ kind: "error" as const, status: 500, retryAfterMs: "1" })),
    );
    const error = await model()
      .query(conversation, tools)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).code).toBe("model_api_unavailable");
    expect((error as ModelError).retryable).toBe(true);
    expect((error as ModelError).message).toContain("HTTP 500");
    expect(server.requests).toHaveLength(4); // first attempt + 3 retries
  });

  it("does not wait out a Retry-After longer than allowed", async () => {
    const events: RetryEvent[] = [];
    server.enqueue({ kind: "error", status: 429, retryAfter: "86400" });
    const error = await model(config(), events)
      .query(conversation, tools)
      .catch((e: unknown) => e);
    expect((error as ModelError).code).toBe("model_api_unavailable");
    expect((error as ModelError).message).toContain("asked to wait 86400 s");
    expect((error as ModelError).message).toContain("maxRetryAfterMs");
    expect(events).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("does not retry a 401 and says to check the key", async () => {
    server.enqueue({ kind: "error", status: 401, message: "bad key" });
    const error = await model()
      .query(conversation, tools)
      .catch((e: unknown) => e);
    expect((error as ModelError).code).toBe("model_api_auth");
    expect((error as ModelError).retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a request that timed out (slow reply)", async () => {
    const cfg = config({ timeoutMs: 150 });
    server.enqueue({ kind: "message", content: "too late", delayMs: 5000 }, message("in time"));
    const reply = await model(cfg).query(conversation, tools);
    expect(reply.message.content).toBe("in time");
    expect(server.requests).toHaveLength(2);
  });

  it("retries a dropped connection", async () => {
    const events: RetryEvent[] = [];
    server.enqueue({ kind: "reset" }, message("after reset"));
    const reply = await model(config(), events).query(conversation, tools);
    expect(reply.message.content).toBe("after reset");
    expect(server.requests).toHaveLength(2);
    expect(events.map((event) => event.attempt)).toEqual([1]);
  });

  it("retries a reply whose connection drops mid-body (it ended the run with 'TypeError: terminated')", async () => {
    const events: RetryEvent[] = [];
    server.enqueue({ kind: "drop-mid-body" }, message("after the drop"));
    const reply = await model(config(), events).query(conversation, tools);
    expect(reply.message.content).toBe("after the drop");
    expect(server.requests).toHaveLength(2);
    expect(events).toEqual([{ attempt: 1, reason: "terminated" }]);
  });

  it("a reply that keeps dropping mid-body ends in a retryable ModelError that says so", async () => {
    server.enqueue(...Array.from({ length: 4 }, () => ({ kind: "drop-mid-body" as const })));
    const error = await model()
      .query(conversation, tools)
      .catch((e: unknown) => e);
    expect((error as ModelError).code).toBe("model_api_unavailable");
    expect((error as ModelError).retryable).toBe(true);
    expect((error as ModelError).message).toContain("terminated");
    expect(server.requests).toHaveLength(4);
  });

  it("a cancel during a Retry-After wait stops at once, with no further request", async () => {
    server.enqueue({ kind: "error", status: 429, retryAfter: "60" });
    const controller = new AbortController();
    const events: RetryEvent[] = [];
    const pending = model(config(), events)
      .query(conversation, tools, controller.signal)
      .catch((e: unknown) => e);
    while (server.requests.length === 0) await sleep(10);
    controller.abort(new Error("cancelled by test"));
    const error = await pending;
    expect((error as Error).message).toBe("cancelled by test");
    expect(server.requests).toHaveLength(1);
    expect(events).toEqual([]);
  }, 30_000);

  it("stops at once when the signal aborts during a slow reply, without retrying", async () => {
    server.enqueue({ kind: "message", content: "slow", delayMs: 10_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("cancelled by test")), 100);
    const error = await model()
      .query(conversation, tools, controller.signal)
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe("cancelled by test");
    expect(server.requests).toHaveLength(1);
  });

  it("leaves no abort listener on the run's signal after 20 calls, retries included, and Node gives no warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      const controller = new AbortController();
      const m = model();
      for (let i = 0; i < 20; i++) {
        if (i % 5 === 0) server.enqueue({ kind: "error", status: 503, retryAfterMs: "1" });
        server.enqueue({ kind: "message", content: `step ${i}` });
        const reply = await m.query(conversation, tools, controller.signal);
        expect(reply.message.content).toBe(`step ${i}`);
      }
      expect(server.requests).toHaveLength(24);
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
      // Node reports MaxListenersExceededWarning on the next tick after the 11th listener.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("createOpenAIClient", () => {
  it("refuses to run against api.openai.com without a key, naming the variable", () => {
    const cfg = modelConfigSchema.parse({});
    expect(() => createOpenAIClient(cfg, {})).toThrow(ConfigError);
    expect(() => createOpenAIClient(cfg, {})).toThrow(/OPENAI_API_KEY/);
  });

  it("takes the endpoint from OPENAI_BASE_URL and needs no key there", () => {
    const client = createOpenAIClient(modelConfigSchema.parse({}), {
      OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
    });
    expect(client.baseURL).toBe("http://127.0.0.1:1/v1");
    expect(client.maxRetries).toBe(5);
  });
});
