/**
 * "Sign in with GitHub": the GitHub App's user-to-server OAuth web flow.
 * https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
 * GET {prefix}/login sends the browser to GitHub with a state that is signed (client secret), expires,
 * is bound to this browser (a cookie) and is good once (a Redis key consumed on return), so a forged,
 * replayed or planted state signs nobody in. The callback exchanges the code for the user's token (github-token.ts),
 * which stays in Redis (session.ts of GitHub sessions: github-session.ts); the cookie holds only a
 * random session id.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { hmacSha256, sameText } from "../../shared/hmac.js";
import { oauthStateKey } from "../../shared/queue/keys.js";
import { createGitHubSession, type GitHubSignInConfig } from "./github-session.js";
import { authorizeUrl, requestUserToken } from "./github-token.js";
import { html, sendPage } from "./html.js";
import type { SessionOptions } from "./session.js";

const STATE_COOKIE = "agent_fix_oauth_state";
const STATE_SECONDS = 10 * 60;

function stateMac(config: GitHubSignInConfig, text: string): string {
  return hmacSha256(config.clientSecret, `agent-fix oauth state ${text}`, "base64url");
}

function stateKey(config: GitHubSignInConfig, nonce: string): string {
  return oauthStateKey(config.keyPrefix, nonce);
}

/** Where GitHub sends the browser back: PUBLIC_URL, else the host the browser used (GitHub checks it against the app's callback URL). */
function callbackUrl(options: SessionOptions, config: GitHubSignInConfig, req: IncomingMessage): string {
  const base =
    config.publicUrl ?? `${options.secure ? "https" : "http"}://${req.headers.host ?? "localhost"}`;
  return `${base.replace(/\/$/, "")}${options.path}/callback`;
}

/** GET {prefix}/login: to GitHub's authorize page with a fresh state. */
export async function startSignIn(
  options: SessionOptions,
  config: GitHubSignInConfig,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const nonce = randomBytes(24).toString("base64url");
  const expires = Math.floor(Date.now() / 1000) + STATE_SECONDS;
  const state = `${nonce}.${expires}.${stateMac(config, `${nonce}.${expires}`)}`;
  await config.redis.set(stateKey(config, nonce), "1", "EX", STATE_SECONDS);
  const authorize = authorizeUrl(config, callbackUrl(options, config, req), state);
  // Lax, not Strict: the browser must send it on the top-level navigation back from GitHub.
  const cookie = `${STATE_COOKIE}=${nonce}; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=${STATE_SECONDS}${options.secure ? "; Secure" : ""}`;
  res.writeHead(302, { location: authorize, "set-cookie": cookie }).end();
}

/** The state's nonce when it is ours, unexpired, this browser's and not used before; else why not. */
async function consumeState(
  config: GitHubSignInConfig,
  req: IncomingMessage,
  state: string,
): Promise<{ ok: true } | { ok: false; why: string }> {
  const match = /^([A-Za-z0-9_-]{32})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(state);
  if (!match) return { ok: false, why: "the sign-in state is missing or malformed" };
  const [, nonce = "", expires = "", mac = ""] = match;
  const expected = stateMac(config, `${nonce}.${expires}`);
  if (!sameText(mac, expected)) return { ok: false, why: "the sign-in state is forged" };
  if (Number(expires) * 1000 <= Date.now())
    return { ok: false, why: "the sign-in took longer than 10 minutes" };
  const cookie = new RegExp(`(?:^|;\\s*)${STATE_COOKIE}=([A-Za-z0-9_-]+)`).exec(
    req.headers.cookie ?? "",
  )?.[1];
  if (cookie !== nonce) return { ok: false, why: "the sign-in was started in another browser" };
  // Deleted on first use: a replayed callback finds nothing.
  if ((await config.redis.del(stateKey(config, nonce))) !== 1) {
    return { ok: false, why: "this sign-in link was already used" };
  }
  return { ok: true };
}

/** GET {prefix}/callback?code&state: the user's token, their login, and a session. */
export async function finishSignIn(
  options: SessionOptions,
  config: GitHubSignInConfig,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const query = new URL(req.url ?? "/", "http://localhost").searchParams;
  const refuse = (why: string) =>
    sendPage(
      res,
      403,
      "Sign-in refused",
      html`<h1>Sign-in refused</h1><p>${why}.</p><p><a href="${options.path}/login">Sign in with GitHub again</a></p>`,
    );
  const error = query.get("error");
  if (error) return refuse(`GitHub answered ${error}: ${query.get("error_description") ?? ""}`);
  const verdict = await consumeState(config, req, query.get("state") ?? "");
  if (!verdict.ok) return refuse(verdict.why);
  const exchanged = await requestUserToken(config, {
    code: query.get("code") ?? "",
    redirectUrl: callbackUrl(options, config, req),
  });
  if ("error" in exchanged) return refuse(exchanged.error);
  const created = await createGitHubSession(config, exchanged);
  if ("error" in created) return refuse(created.error);
  const clearState = `${STATE_COOKIE}=; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=0`;
  res
    .writeHead(303, { location: `${options.path}/`, "set-cookie": [created.cookie(options), clearState] })
    .end();
}
