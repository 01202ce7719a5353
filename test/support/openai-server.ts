/**
 * A stand-in for an OpenAI-compatible chat completions API, for tests of the real openai SDK:
 * scripted replies (text, tool calls, usage), injectable 429 with Retry-After, 5xx, slow replies, dropped
 * connections (before the answer or mid-body) and malformed tool-call JSON. Every request is recorded with its headers and JSON body.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent as is (so it may be malformed JSON). */
  arguments: Record<string, unknown> | string;
}

export type ScriptedReply =
  | {
      kind: "message";
      content?: string | null;
      toolCalls?: ScriptedToolCall[];
      /** Default: prompt tokens = request body length / 4, completion tokens = reply length / 4. */
      usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
      /** Wait this long before answering (a slow model). */
      delayMs?: number;
    }
  | {
      kind: "error";
      status: number;
      /** Sent as the Retry-After header (seconds, or an HTTP date). */
      retryAfter?: string;
      retryAfterMs?: string;
      message?: string;
    }
  /** Accept the request and never answer (client timeouts); ends when the server closes. */
  | { kind: "hang" }
  /** Close the connection without an answer (a connection reset). */
  | { kind: "reset" }
  /** Answer 200 with the headers and half the body, then close the connection (fetch: "terminated"). */
  | { kind: "drop-mid-body" };

export interface RateLimitOutage {
  afterRequests: number;
  forMs: number;
  /** Sent as retry-after (seconds); none when absent. */
  retryAfterSeconds?: number;
}

/** OpenAI's 429 body for a rate limit (error.code rate_limit_exceeded). */
function rateLimitBody(retryAfterSeconds: number | undefined) {
  const wait = retryAfterSeconds === undefined ? "" : ` Please try again in ${retryAfterSeconds}s.`;
  return {
    error: {
      message: `Rate limit reached for requests in organization org-standin on requests per min (RPM): Limit 3, Used 3, Requested 1.${wait} Visit https://platform.openai.com/account/rate-limits to learn more.`,
      type: "requests",
      param: null,
      code: "rate_limit_exceeded",
    },
  };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  receivedAt: number;
}

export interface OpenAIStandIn {
  /** Base URL for the SDK, ending in /v1. */
  url: string;
  requests: RecordedRequest[];
  /** Append replies to the script; each request consumes one. */
  enqueue(...replies: ScriptedReply[]): void;
  /**
   * From request number `afterRequests + 1` on, every request for `forMs` is answered 429 as OpenAI
   * answers a rate limit (consuming no scripted reply); the script resumes after.
   */
  rateLimitFor(outage: RateLimitOutage): void;
  /** Requests answered 429 by the outage so far. */
  rateLimited(): number;
  remaining(): number;
  close(): Promise<void>;
}

export function message(content: string | null, ...toolCalls: ScriptedToolCall[]): ScriptedReply {
  return toolCalls.length ? { kind: "message", content, toolCalls } : { kind: "message", content };
}

export async function startOpenAIStandIn(): Promise<OpenAIStandIn> {
  const script: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  let callCounter = 0;
  let outage: (RateLimitOutage & { startedAt?: number }) | undefined;
  let limited = 0;
  /** Whether this request falls in the outage (which starts with the first request past `afterRequests`). */
  const inOutage = () => {
    if (!outage || requests.length <= outage.afterRequests) return false;
    outage.startedAt ??= Date.now();
    return Date.now() - outage.startedAt < outage.forMs;
  };
  const hanging = new Set<() => void>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        body = { unparsable: raw };
      }
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body,
        receivedAt: Date.now(),
      });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(payload));
      };
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        return send(404, {
          error: { message: `stand-in serves POST /v1/chat/completions, not ${req.method} ${req.url}` },
        });
      }
      if (inOutage()) {
        limited++;
        const after = outage?.retryAfterSeconds;
        return send(429, rateLimitBody(after), after === undefined ? {} : { "retry-after": String(after) });
      }
      const reply = script.shift();
      if (!reply) {
        return send(400, {
          error: { message: "the stand-in server has no scripted reply left", type: "invalid_request_error" },
        });
      }
      if (reply.kind === "reset") {
        req.socket.destroy();
        return;
      }
      if (reply.kind === "drop-mid-body") {
        const whole = JSON.stringify({ id: "chatcmpl-cut", object: "chat.completion", choices: [] });
        res.writeHead(200, { "content-type": "application/json", "content-length": String(whole.length) });
        res.write(whole.slice(0, whole.length / 2), () => req.socket.destroy());
        return;
      }
      if (reply.kind === "hang") {
        hanging.add(() => res.destroy());
        return;
      }
      if (reply.kind === "error") {
        const headers: Record<string, string> = {};
        if (reply.retryAfter !== undefined) headers["retry-after"] = reply.retryAfter;
        if (reply.retryAfterMs !== undefined) headers["retry-after-ms"] = reply.retryAfterMs;
        return send(
          reply.status,
          { error: { message: reply.message ?? `injected HTTP ${reply.status}`, type: "server_error" } },
          headers,
        );
      }
      const toolCalls = reply.toolCalls?.map((call) => ({
        id: call.id ?? `call_${++callCounter}`,
        type: "function",
        function: {
          name: call.name,
          arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
        },
      }));
      const content = reply.content ?? null;
      const usage = reply.usage ?? {
        prompt_tokens: Math.ceil(raw.length / 4),
        completion_tokens: Math.ceil(((content ?? "").length + JSON.stringify(toolCalls ?? []).length) / 4),
      };
      const payload = {
        id: `chatcmpl-${requests.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: String(body.model ?? "stand-in"),
        choices: [
          {
            index: 0,
            finish_reason: toolCalls?.length ? "tool_calls" : "stop",
            message: { role: "assistant", content, ...(toolCalls?.length ? { tool_calls: toolCalls } : {}) },
          },
        ],
        usage: {
          prompt_tokens: usage.prompt_tokens,
          completion_tokens: usage.completion_tokens,
          total_tokens: usage.prompt_tokens + usage.completion_tokens,
          prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
        },
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => send(200, payload), reply.delayMs);
        res.on("close", () => clearTimeout(timer));
      } else {
        send(200, payload);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => script.push(...replies),
    rateLimitFor: (next) => {
      outage = { ...next };
    },
    rateLimited: () => limited,
    remaining: () => script.length,
    close: async () => {
      for (const destroy of hanging) destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
