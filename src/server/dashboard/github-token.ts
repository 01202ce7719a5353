/**
 * GitHub's OAuth web flow for the dashboard's viewers, through @octokit/oauth-methods: the authorize
 * URL, and a sign-in's code or a refresh token exchanged for a user access token (8 hours when the
 * app's user tokens expire, with a 6-month refresh token; none when the app opted out of expiring
 * tokens). GitHub answers 200 with `error` for a bad one, which the library throws as a RequestError.
 * https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
 */
import { exchangeWebFlowCode, getWebFlowAuthorizationUrl, refreshToken } from "@octokit/oauth-methods";
import { request } from "@octokit/request";

/** The GitHub App's OAuth client: its id and secret, and GitHub's web URL. */
interface OAuthClient {
  clientId: string;
  clientSecret: string;
  webUrl: string;
}

export interface UserToken {
  token: string;
  /** Seconds the token lives. */
  expiresIn: number;
  /** Present when the app's user tokens expire: exchanged once for a new pair. */
  refresh?: { token: string; expiresIn: number };
}

/** A sign-in's code and the callback URL it was issued for, or a session's refresh token. */
type TokenGrant = { code: string; redirectUrl: string } | { refreshToken: string };

/** A token request GitHub has not answered by then has failed (github-refresh.ts's lock outlives it). */
export const TOKEN_REQUEST_TIMEOUT_MS = 10_000;

/** The default lifetime of a token GitHub gives without `expires_in` (it does not expire). */
const NON_EXPIRING_SECONDS = 8 * 3600;

/**
 * The library derives GitHub's web URL from the request's base URL (dropping `api.` or `/api/v3`); given
 * the web URL itself, it keeps it as it is: github.com, GitHub Enterprise (GHE_HOST) and the stand-in alike.
 */
function oauthRequest(config: OAuthClient) {
  return request.defaults({
    baseUrl: config.webUrl,
    request: { signal: AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS) },
  });
}

/** GitHub's authorize page for this app, coming back to `redirectUrl` with `state`. */
export function authorizeUrl(config: OAuthClient, redirectUrl: string, state: string): string {
  return getWebFlowAuthorizationUrl({
    clientType: "github-app",
    clientId: config.clientId,
    redirectUrl,
    state,
    request: oauthRequest(config),
  }).url;
}

/** POST /login/oauth/access_token with the app's client credentials and the grant. */
export async function requestUserToken(
  config: OAuthClient,
  grant: TokenGrant,
): Promise<UserToken | { error: string }> {
  const client = {
    clientType: "github-app",
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    request: oauthRequest(config),
  } as const;
  const answered = await ("code" in grant
    ? exchangeWebFlowCode({ ...client, code: grant.code, redirectUrl: grant.redirectUrl })
    : refreshToken({ ...client, refreshToken: grant.refreshToken })
  ).catch((error: unknown) => ({ error }));
  if ("error" in answered) return { error: refusal(grant, answered.error) };
  const body = answered.data as unknown as Record<string, unknown>;
  if (typeof body.access_token !== "string")
    return { error: `GitHub answered ${answered.status} without a token` };
  const seconds = (value: unknown, otherwise: number) => (typeof value === "number" ? value : otherwise);
  return {
    token: body.access_token,
    expiresIn: seconds(body.expires_in, NON_EXPIRING_SECONDS),
    ...(typeof body.refresh_token === "string"
      ? { refresh: { token: body.refresh_token, expiresIn: seconds(body.refresh_token_expires_in, 0) } }
      : {}),
  };
}

/** Why GitHub gave no token: its own error for a refused grant, else that it could not be reached. */
function refusal(grant: TokenGrant, error: unknown): string {
  const response = (error as { response?: { status: number; data?: unknown } }).response;
  // No response: the request itself failed (network, timeout).
  if (!response) return `GitHub could not be reached (${String(error)})`;
  const data = (response.data ?? {}) as Record<string, unknown>;
  if (typeof data.error === "string") {
    const what = "code" in grant ? "the code" : "the refresh token";
    return `GitHub refused ${what}: ${data.error} (${String(data.error_description ?? "")})`;
  }
  return `GitHub answered ${response.status} without a token`;
}
