/**
 * The app's own signatures (dashboard session cookies, OAuth state, trajectory links): an HMAC-SHA256
 * keyed by a secret, and a comparison that tells an attacker nothing through its timing. Webhook
 * signatures are GitHub's format and checked by @octokit/webhooks-methods (webhook-guard.ts).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The HMAC-SHA256 of `text` keyed by `secret`, in the encoding the caller's format uses. */
export function hmacSha256(secret: string, text: string, encoding: "hex" | "base64url"): string {
  return createHmac("sha256", secret).update(text).digest(encoding);
}

/**
 * Whether two strings are equal, in a time that depends on neither where they differ nor their
 * lengths: both are compared as HMACs under one fixed key, so the compared buffers are always as long.
 */
export function sameText(a: string, b: string): boolean {
  return timingSafeEqual(
    Buffer.from(hmacSha256("compare", a, "hex")),
    Buffer.from(hmacSha256("compare", b, "hex")),
  );
}
