/**
 * Sign-in with the operator's shared secret (AGENT_FIX_DASHBOARD_SECRET): the form posts it once, the
 * answer is a cookie holding an expiry and an HMAC of it keyed by the secret, so changing the secret
 * signs everyone out. HttpOnly, SameSite=Strict (no other site can make a signed-in request), Secure
 * behind https, and scoped to the dashboard's path.
 */
import type { IncomingMessage } from "node:http";
import { hmacSha256, sameText } from "../../shared/hmac.js";

const COOKIE = "agent_fix_dashboard";
const SESSION_SECONDS = 12 * 60 * 60;

export interface SessionOptions {
  /** The operator's shared secret; without it only GitHub sign-in is offered. */
  secret?: string;
  /** The dashboard's path prefix, e.g. /dashboard. */
  path: string;
  /** Whether the app is served over https (PUBLIC_URL): the cookie is then Secure. */
  secure: boolean;
}

function mac(secret: string, text: string): string {
  return hmacSha256(secret, text, "base64url");
}

/** Whether a submitted secret is the operator's. */
export function secretMatches(options: SessionOptions, given: string): boolean {
  return options.secret !== undefined && sameText(given, options.secret);
}

/** The Set-Cookie value of a new session. */
export function sessionCookie(options: SessionOptions, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + SESSION_SECONDS;
  const value = `${expires}.${mac(options.secret ?? "", `agent-fix dashboard session until ${expires}`)}`;
  return `${COOKIE}=${value}; ${attributes(options)}; Max-Age=${SESSION_SECONDS}`;
}

export function clearedCookie(options: SessionOptions): string {
  return `${COOKIE}=; ${attributes(options)}; Max-Age=0`;
}

function attributes(options: SessionOptions): string {
  return `Path=${options.path}; HttpOnly; SameSite=Strict${options.secure ? "; Secure" : ""}`;
}

/** Whether the request carries a valid, unexpired session. */
export function signedIn(options: SessionOptions, req: IncomingMessage, now = Date.now()): boolean {
  const cookies = (req.headers.cookie ?? "").split(";").map((part) => part.trim());
  const value = cookies.find((part) => part.startsWith(`${COOKIE}=`))?.slice(COOKIE.length + 1) ?? "";
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!match || options.secret === undefined) return false;
  const expires = Number(match[1]);
  if (expires * 1000 <= now) return false;
  return sameText(match[2] ?? "", mac(options.secret, `agent-fix dashboard session until ${expires}`));
}
