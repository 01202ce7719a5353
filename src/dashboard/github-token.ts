/**
 * GitHub's token endpoint for the dashboard's viewers: a sign-in's code, or a refresh token, exchanged
 * for a user access token (8 hours when the app's user tokens expire, with a 6-month refresh token;
 * none when the app opted out of expiring tokens). GitHub answers 200 with `error` for a bad one.
 * https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
 */
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

/** A token request GitHub has not answered by then has failed (github-refresh.ts's lock outlives it). */
export const TOKEN_REQUEST_TIMEOUT_MS = 10_000;

/** The default lifetime of a token GitHub gives without `expires_in` (it does not expire). */
const NON_EXPIRING_SECONDS = 8 * 3600;

/** POST /login/oauth/access_token with the app's client credentials and `grant` (code or refresh_token). */
export async function requestUserToken(
  config: OAuthClient,
  grant: Record<string, string>,
): Promise<UserToken | { error: string }> {
  const response = await fetch(`${config.webUrl}/login/oauth/access_token`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ client_id: config.clientId, client_secret: config.clientSecret, ...grant }),
    signal: AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS),
  }).catch((error: unknown) => ({ error }));
  if ("error" in response) return { error: `GitHub could not be reached (${String(response.error)})` };
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (typeof body.error === "string") {
    const what = grant.grant_type === "refresh_token" ? "the refresh token" : "the code";
    return { error: `GitHub refused ${what}: ${body.error} (${String(body.error_description ?? "")})` };
  }
  if (typeof body.access_token !== "string")
    return { error: `GitHub answered ${response.status} without a token` };
  const seconds = (value: unknown, otherwise: number) => (typeof value === "number" ? value : otherwise);
  return {
    token: body.access_token,
    expiresIn: seconds(body.expires_in, NON_EXPIRING_SECONDS),
    ...(typeof body.refresh_token === "string"
      ? { refresh: { token: body.refresh_token, expiresIn: seconds(body.refresh_token_expires_in, 0) } }
      : {}),
  };
}
