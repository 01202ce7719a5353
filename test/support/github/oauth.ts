/**
 * GitHub's user-to-server OAuth web flow for the stand-in, with GitHub's documented shapes:
 * https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
 * A browser "signed in to GitHub" carries the `user_session` cookie of `signInBrowser`; the authorize
 * page then approves at once and redirects to the callback with a one-use code (10 minutes), which
 * POST /login/oauth/access_token exchanges for a `ghu_` token (8 hours) acting as that user and a
 * `ghr_` refresh token (6 months), which the same endpoint (grant_type=refresh_token) exchanges once
 * for a new pair:
 * https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StandInUser } from "./state.js";

const CODE_TTL_MS = 10 * 60 * 1000;
const USER_TOKEN_SECONDS = 8 * 60 * 60;
const TROUBLESHOOTING =
  "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors";

const REFRESH_TOKEN_SECONDS = 15_811_200;
type OAuthError =
  | "bad_verification_code"
  | "bad_refresh_token"
  | "incorrect_client_credentials"
  | "redirect_uri_mismatch";
const DESCRIPTIONS: Record<OAuthError, [string, string]> = {
  bad_refresh_token: ["The refresh token passed is incorrect or expired.", "#bad-refresh-token"],
  bad_verification_code: ["The code passed is incorrect or expired.", "#bad-verification-code"],
  incorrect_client_credentials: [
    "The client_id and/or client_secret passed are incorrect.",
    "#incorrect-client-credentials",
  ],
  redirect_uri_mismatch: [
    "The redirect_uri MUST match the registered callback URL for this application.",
    "#redirect-uri-mismatch2",
  ],
};

interface Grant {
  login: string;
  redirectUri: string;
  expiresAt: number;
}

export class StandInOAuth {
  /** The GitHub App's client id and secret (Settings > Developer settings > the app). */
  readonly clientId = `Iv23li${randomBytes(7).toString("hex")}`;
  readonly clientSecret = randomBytes(20).toString("hex");
  /** The app's registered callback URLs; a redirect_uri must start with one of them. */
  callbackUrls: string[] = [];
  readonly users = new Map<string, StandInUser>();
  /** ghu_ token -> login and expiry. */
  readonly userTokens = new Map<string, { login: string; expiresAt: number }>();
  /** ghr_ refresh token -> login and expiry; each is good once. */
  readonly refreshTokens = new Map<string, { login: string; expiresAt: number }>();
  /** Every code or refresh exchange attempted, with GitHub's answer (an error code, "ok", "refreshed"). */
  readonly exchanges: Array<OAuthError | "ok" | "refreshed"> = [];
  /** Lifetime of the user tokens issued from now on (GitHub's: 8 hours). */
  userTokenSeconds = USER_TOKEN_SECONDS;
  private readonly browsers = new Map<string, string>();
  private readonly grants = new Map<string, Grant>();
  private nextUserId = 7000;

  addUser(login: string): StandInUser {
    const user: StandInUser = { login, id: this.nextUserId++, type: "User" };
    this.users.set(login, user);
    return user;
  }

  /** The Cookie header of a browser signed in to GitHub as `login`. */
  signInBrowser(login: string): string {
    if (!this.users.has(login)) this.addUser(login);
    const session = randomBytes(16).toString("hex");
    this.browsers.set(session, login);
    return `user_session=${session}`;
  }

  /** Expires `login`'s user tokens now, as 8 hours do (its refresh tokens stay good). */
  expireUserTokens(login: string): void {
    for (const issued of this.userTokens.values()) if (issued.login === login) issued.expiresAt = Date.now();
  }

  /** The login a live user token acts for, or undefined (unknown or expired: 401 Bad credentials). */
  userOf(token: string): string | undefined {
    const issued = this.userTokens.get(token);
    return issued && issued.expiresAt > Date.now() ? issued.login : undefined;
  }

  /** GET /login/oauth/authorize and POST /login/oauth/access_token; false for any other request. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, body: () => Promise<string>): boolean {
    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      this.authorize(req, res, url);
      return true;
    }
    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      void body().then((text) => this.exchange(req, res, text));
      return true;
    }
    return false;
  }

  private authorize(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const query = url.searchParams;
    if (query.get("client_id") !== this.clientId) {
      return void res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not Found</h1>");
    }
    const redirectUri = query.get("redirect_uri") ?? this.callbackUrls[0] ?? "";
    if (!this.callbackUrls.some((registered) => redirectUri.startsWith(registered))) {
      const page = "<p>The redirect_uri is not associated with this application.</p>";
      return void res.writeHead(400, { "content-type": "text/html" }).end(page);
    }
    const session = /(?:^|;\s*)user_session=([0-9a-f]+)/.exec(req.headers.cookie ?? "")?.[1] ?? "";
    const login = this.browsers.get(session);
    if (!login) {
      const back = encodeURIComponent(`${url.pathname}${url.search}`);
      return void res.writeHead(302, { location: `/login?return_to=${back}` }).end();
    }
    const code = randomBytes(10).toString("hex");
    this.grants.set(code, { login, redirectUri, expiresAt: Date.now() + CODE_TTL_MS });
    const target = new URL(redirectUri);
    target.searchParams.set("code", code);
    const state = query.get("state");
    if (state !== null) target.searchParams.set("state", state);
    res.writeHead(302, { location: target.toString() }).end();
  }

  private exchange(req: IncomingMessage, res: ServerResponse, text: string): void {
    const json = /json/.test(String(req.headers["content-type"] ?? ""));
    const params = json
      ? new URLSearchParams(Object.entries(JSON.parse(text || "{}") as Record<string, string>))
      : new URLSearchParams(text);
    const answer = this.answer(params);
    const refreshed = params.get("grant_type") === "refresh_token";
    this.exchanges.push("error" in answer ? (answer.error as OAuthError) : refreshed ? "refreshed" : "ok");
    // GitHub answers 200 even for errors; the body says which.
    if (/application\/json/.test(String(req.headers.accept ?? ""))) {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(answer));
    } else {
      const form = new URLSearchParams(
        Object.entries(answer).map(([k, v]): [string, string] => [k, String(v)]),
      );
      res.writeHead(200, { "content-type": "application/x-www-form-urlencoded" }).end(form.toString());
    }
  }

  private answer(params: URLSearchParams): Record<string, string | number> {
    if (params.get("client_id") !== this.clientId || params.get("client_secret") !== this.clientSecret) {
      return oauthError("incorrect_client_credentials");
    }
    if (params.get("grant_type") === "refresh_token") return this.refresh(params.get("refresh_token") ?? "");
    const code = params.get("code") ?? "";
    const grant = this.grants.get(code);
    // A code is good once: GitHub refuses it the second time as it refuses an unknown one.
    this.grants.delete(code);
    if (!grant || grant.expiresAt <= Date.now()) return oauthError("bad_verification_code");
    const redirectUri = params.get("redirect_uri");
    if (redirectUri !== null && redirectUri !== grant.redirectUri) return oauthError("redirect_uri_mismatch");
    return this.issue(grant.login);
  }

  /** A refresh token is good once: its exchange revokes it and answers a new pair. */
  private refresh(refreshToken: string): Record<string, string | number> {
    const issued = this.refreshTokens.get(refreshToken);
    this.refreshTokens.delete(refreshToken);
    if (!issued || issued.expiresAt <= Date.now()) return oauthError("bad_refresh_token");
    return this.issue(issued.login);
  }

  private issue(login: string): Record<string, string | number> {
    const token = `ghu_${randomBytes(18).toString("base64url")}`;
    this.userTokens.set(token, { login, expiresAt: Date.now() + this.userTokenSeconds * 1000 });
    const refreshToken = `ghr_${randomBytes(30).toString("base64url")}`;
    this.refreshTokens.set(refreshToken, { login, expiresAt: Date.now() + REFRESH_TOKEN_SECONDS * 1000 });
    return {
      access_token: token,
      expires_in: this.userTokenSeconds,
      refresh_token: refreshToken,
      refresh_token_expires_in: REFRESH_TOKEN_SECONDS,
      scope: "",
      token_type: "bearer",
    };
  }
}

function oauthError(error: OAuthError): Record<string, string> {
  const [description, anchor] = DESCRIPTIONS[error];
  return { error, error_description: description, error_uri: `${TROUBLESHOOTING}/${anchor}` };
}
