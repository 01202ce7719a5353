/**
 * What every POST passes before Probot sees it: a size limit (from Content-Length, and counted while
 * the body streams in) and the X-Hub-Signature-256 check. Probot reads the whole body into memory and
 * logs the whole event when a signature does not match, so a forged or oversized POST must never
 * reach it: a 300 MB POST with a bogus signature once took the server to 3 GB and 314 MB of logs.
 * A body that passes is handed on as `req.body` (a string), which Probot uses instead of the stream,
 * and its SHA-256 is kept for signedBodyDigest: the signature covers the body and nothing else (not
 * X-GitHub-Delivery), so that digest, not the delivery id, is what tells a replay (src/server/handlers/deliveries.ts).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { verify } from "@octokit/webhooks-methods";

interface WebhookGuardOptions {
  secret: string;
  /** Largest body accepted (AGENT_FIX_WEBHOOK_MAX_BYTES). */
  maxBytes: number;
  /** Bytes all requests together may hold in memory at once; past it new bytes get 503. */
  budgetBytes: number;
  log: { warn(fields: object, message: string): void };
}

export type WebhookGuard = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

type Refusal = { status: 400 | 401 | 413 | 503; error: string };

/** A guard for one server; it answers a refused request itself and returns true, else false. */
export function createWebhookGuard(options: WebhookGuardOptions): WebhookGuard {
  let buffered = 0;
  const budget = {
    take(bytes: number): boolean {
      if (buffered + bytes > options.budgetBytes) return false;
      buffered += bytes;
      return true;
    },
    give(bytes: number) {
      buffered -= bytes;
    },
  };
  return async (req, res) => {
    if (req.method !== "POST") return false;
    // A client that goes away mid-body must not crash the server through an unhandled 'error'.
    req.on("error", () => {});
    const refusal = refuseByHeaders(req, options.maxBytes) ?? (await readVerified(req, options, budget));
    if (!refusal) return false;
    // Never the body: who sent what, and why it was refused.
    options.log.warn(
      {
        delivery: req.headers["x-github-delivery"],
        event: req.headers["x-github-event"],
        contentLength: req.headers["content-length"],
        status: refusal.status,
      },
      `webhook refused: ${refusal.error}`,
    );
    refuse(req, res, refusal);
    return true;
  };
}

function refuseByHeaders(req: IncomingMessage, maxBytes: number): Refusal | null {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxBytes) return tooLarge(maxBytes);
  if (typeof req.headers["x-hub-signature-256"] !== "string")
    return {
      status: 400,
      error:
        "Required header missing: x-hub-signature-256 (GitHub sends it when the app has a webhook secret)",
    };
  return null;
}

function tooLarge(maxBytes: number): Refusal {
  return {
    status: 413,
    error: `Payload larger than ${maxBytes} bytes (GitHub caps webhook payloads at 25 MB)`,
  };
}

interface Budget {
  take(bytes: number): boolean;
  give(bytes: number): void;
}

/** Reads the body up to the limit, then checks its signature; on success leaves it in `req.body`. */
async function readVerified(
  req: IncomingMessage,
  options: WebhookGuardOptions,
  budget: Budget,
): Promise<Refusal | null> {
  const read = await readLimited(req, options.maxBytes, budget);
  if ("status" in read) return read;
  const body = read.body.toString("utf8");
  if (!(await signatureMatches(options.secret, body, String(req.headers["x-hub-signature-256"])))) {
    return {
      status: 401,
      error:
        "x-hub-signature-256 does not match the payload: the webhook secret of the GitHub App differs from WEBHOOK_SECRET",
    };
  }
  (req as IncomingMessage & { body?: string }).body = body;
  verifiedDigests.set(req, createHash("sha256").update(read.body).digest("hex"));
  return null;
}

/** The SHA-256 of each request's body whose signature verified, by request (gone with the request). */
const verifiedDigests = new WeakMap<IncomingMessage, string>();

/** The hex SHA-256 of the raw bytes whose signature this guard verified; undefined for any other request. */
export function signedBodyDigest(req: IncomingMessage): string | undefined {
  return verifiedDigests.get(req);
}

/** The body, or a refusal as soon as it passes the limit (the rest is left unread). */
function readLimited(
  req: IncomingMessage,
  maxBytes: number,
  budget: Budget,
): Promise<{ body: Buffer } | Refusal> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: { body: Buffer } | Refusal | Error) => {
      req.off("data", onData).off("end", onEnd).off("error", finish);
      budget.give(size);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) {
        req.pause();
        return finish(tooLarge(maxBytes));
      }
      if (!budget.take(chunk.length)) {
        req.pause();
        return finish({ status: 503, error: "Too many webhook bytes in flight; retry the delivery later" });
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => finish({ body: Buffer.concat(chunks, size) });
    req.on("data", onData).on("end", onEnd).on("error", finish);
  });
}

/**
 * GitHub's `sha256=<hex>` signature of the body, compared in constant time by @octokit/webhooks-methods
 * (the same check Probot makes). It signs the body as UTF-8 text, which is what Probot is handed; it
 * refuses an empty body or signature by throwing, and neither is a signed delivery.
 */
async function signatureMatches(secret: string, body: string, signature: string): Promise<boolean> {
  if (body === "" || signature === "") return false;
  return verify(secret, body, signature);
}

/** How long a refused client may keep sending (read and dropped) before its connection is cut. */
const LINGER_MS = 1_000;

/**
 * Answers, then cuts the connection. A body still streaming in is read and dropped for a moment
 * first (a lingering close, as web servers do): Node's own `Connection: close` handling destroys the
 * socket with the body unread, which resets the connection and can make the client lose the answer.
 * Nothing of it is kept, and the connection is cut after LINGER_MS whatever the client does.
 */
function refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal): void {
  if (res.headersSent) return void req.socket.destroy();
  const body = `${JSON.stringify({ error: refusal.error })}\n`;
  res.writeHead(refusal.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...(refusal.status === 503 ? { "retry-after": "10" } : {}),
  });
  res.end(body);
  if (req.complete) return;
  req.on("data", () => {});
  req.resume();
  const cut = setTimeout(() => req.socket.destroy(), LINGER_MS);
  cut.unref();
  req.socket.once("close", () => clearTimeout(cut));
}
