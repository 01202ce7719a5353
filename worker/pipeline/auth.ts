import type { Probot, ProbotOctokit } from "probot";
import { ConfigError, GitHubError } from "../../src/errors.js";
import type { CommitIdentity } from "./commit.js";

/** Installation credentials, minted on the host from the app's private key; none of it enters a sandbox. */
export interface InstallationAuth {
  /** An API client authenticated as the installation (tokens renewed by Probot's auth strategy). */
  octokit(installationId: number): Promise<ProbotOctokit>;
  /** A freshly minted installation token, for git over HTTP (clone, push). */
  token(installationId: number): Promise<string>;
}

/** Step 1 over Probot's app authentication (GHE_HOST / GHE_PROTOCOL decide where it points). */
export function probotInstallationAuth(probot: Pick<Probot, "auth">): InstallationAuth {
  return {
    octokit: (installationId) =>
      probot.auth(installationId).catch((error: unknown) => rethrow(error, installationId)),
    async token(installationId) {
      const app = await probot.auth();
      // A fresh token through the REST endpoint (the app JWT rides on the client's own base URL, so
      // GitHub Enterprise and the stand-in work): git needs one with its full lifetime left.
      const { data } = await app.rest.apps
        .createInstallationAccessToken({ installation_id: installationId })
        .catch((error: unknown) => rethrow(error, installationId));
      if (!data.token) {
        throw new GitHubError(`No installation token for installation ${installationId}`, {
          code: "installation_token_missing",
          retryable: false,
        });
      }
      return data.token;
    },
  };
}

function rethrow(error: unknown, installationId: number): never {
  const status = (error as { status?: number }).status ?? 0;
  throw new GitHubError(`Could not authenticate as installation ${installationId}: ${String(error)}`, {
    code: status === 404 ? "installation_not_found" : "installation_auth_failed",
    retryable: status === 0 || status >= 500 || status === 429,
    hint: status === 404 ? "The app was uninstalled from this repository or account." : undefined,
    cause: error,
  });
}

/**
 * `SLUG[bot]` with the noreply address GitHub links to the app's bot account:
 * `<bot user id>+SLUG[bot]@users.noreply.<host>` (the GHE host's on GitHub Enterprise Server).
 */
export async function appIdentity(
  probot: Pick<Probot, "auth">,
  settings: { APP_ID: number; GHE_HOST?: string | undefined },
): Promise<CommitIdentity> {
  const app = await probot.auth();
  const { data } = await app.rest.apps.getAuthenticated().catch((error: unknown) => {
    throw new ConfigError(`Cannot authenticate as the GitHub App ${settings.APP_ID}: ${String(error)}`, {
      code: "app_auth_failed",
      hint: "Check APP_ID, PRIVATE_KEY and GHE_HOST.",
    });
  });
  const slug = data?.slug ?? "agent-fix";
  const login = `${slug}[bot]`;
  const id = await botUserId(probot, app, login);
  const host = settings.GHE_HOST
    ? `users.noreply.${settings.GHE_HOST.replace(/:\d+$/, "")}`
    : "users.noreply.github.com";
  if (id === null) console.warn(`[worker] could not look up the id of ${login}; commits will not link to it`);
  return { name: login, email: id === null ? `${login}@${host}` : `${id}+${login}@${host}` };
}

/**
 * The bot user's id. `GET /users/{username}` is not an app (JWT) endpoint: the app's client refuses
 * it before sending. It is public, so it is asked without credentials first; where the API requires
 * them (GitHub Enterprise Server in private mode), as one of the app's installations.
 */
async function botUserId(
  probot: Pick<Probot, "auth">,
  app: ProbotOctokit,
  login: string,
): Promise<number | null> {
  const baseUrl = app.request.endpoint.DEFAULTS.baseUrl;
  const anonymous = await fetch(`${baseUrl}/users/${encodeURIComponent(login)}`, {
    headers: { accept: "application/vnd.github+json" },
  }).catch(() => null);
  if (anonymous?.ok) {
    const user = (await anonymous.json().catch(() => null)) as { id?: unknown } | null;
    if (typeof user?.id === "number") return user.id;
  }
  try {
    const { data: installations } = await app.rest.apps.listInstallations({ per_page: 1 });
    const first = installations[0];
    if (!first) return null;
    const installation = await probot.auth(first.id);
    const { data: user } = await installation.rest.users.getByUsername({ username: login });
    return user.id;
  } catch {
    return null;
  }
}
