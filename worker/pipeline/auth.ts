import type { Probot, ProbotOctokit } from "probot";
import { ConfigError, GitHubError } from "../../src/errors.js";
import { ORG_CONFIG_REPO } from "../config/org-defaults.js";
import { createWorkerLogger, type Logger } from "../log.js";
import type { CommitIdentity } from "./commit.js";

/** What a run's tokens are for: each gets only the permissions of its step. */
type TokenPurpose = "clone" | "push" | "config" | "api";

/**
 * The permissions each token is minted with (metadata: read comes with every token): cloning reads
 * contents, pushing writes them, and the API client writes comments, reactions and the pull request.
 */
export const TOKEN_PERMISSIONS = {
  clone: { contents: "read" },
  push: { contents: "write" },
  config: { contents: "read" },
  api: { issues: "write", pull_requests: "write" },
} as const satisfies Record<TokenPurpose, Record<string, "read" | "write">>;

/**
 * The credentials of one run: installation tokens minted on the host for the run's one repository,
 * each with its step's permissions; none of it enters a sandbox, and revoke() ends them all.
 */
export interface RunCredentials {
  /** The API client (issues and pull requests), its token renewed before it expires. */
  octokit(): Promise<ProbotOctokit>;
  /** A fresh token for git over HTTP: `clone` may only read, `push` may write contents. */
  token(purpose: "clone" | "push"): Promise<string>;
  /** A client that may only read contents (the repository's config through the contents API). */
  contentsReader(): Promise<ProbotOctokit>;
  /**
   * A client that may only read the contents of the owner's `.github` repository (organisation
   * defaults); null when the installation has no such repository.
   */
  orgContentsReader(): Promise<ProbotOctokit | null>;
  /** Revokes every token minted so far (DELETE /installation/token); never throws. */
  revoke(): Promise<void>;
}

/** Installation credentials, minted on the host from the app's private key. */
export interface InstallationAuth {
  /** Credentials for a run on repository `repositoryId` of installation `installationId`. */
  forRun(installationId: number, repositoryId: number): RunCredentials;
}

// An API token is replaced this long before it expires (GitHub's last one hour).
const RENEW_BEFORE_MS = 10 * 60 * 1000;

type OctokitClass = new (options: Record<string, unknown>) => ProbotOctokit;

/** Steps 1 and 8 over Probot's app authentication (GHE_HOST / GHE_PROTOCOL decide where it points). */
export function probotInstallationAuth(
  probot: Pick<Probot, "auth">,
  logger: Logger = createWorkerLogger(),
): InstallationAuth {
  return {
    forRun(installationId, repositoryId) {
      const minted: string[] = [];
      const mint = tokenMinter(probot, installationId, repositoryId, minted);
      const apiToken = renewingApiToken(mint);
      let client: ProbotOctokit | undefined;
      return {
        async octokit() {
          await apiToken(); // mint now: a failure surfaces here, as the job's start
          const app = await probot.auth();
          client ??= new (app.constructor as OctokitClass)({ authStrategy: renewingTokenAuth(apiToken) });
          return client;
        },
        token: async (purpose) => (await mint(purpose)).token,
        async contentsReader() {
          const { app, token } = await mint("config");
          return new (app.constructor as OctokitClass)({ auth: { token } });
        },
        async orgContentsReader() {
          // GitHub answers 422 when the installation cannot see a repository of that name.
          const minted = await mint("config", [ORG_CONFIG_REPO]).catch((error: unknown) => {
            if ((error as { cause?: { status?: number } }).cause?.status === 422) return null;
            throw error;
          });
          return minted
            ? new (minted.app.constructor as OctokitClass)({ auth: { token: minted.token } })
            : null;
        },
        revoke: () => revokeTokens(probot, minted.splice(0), logger),
      };
    },
  };
}

type MintedToken = { app: ProbotOctokit; token: string; expiresAt: number };

/** Mints a token for `purpose` on the run's repository (or `repositories`), noting it in `minted`. */
function tokenMinter(
  probot: Pick<Probot, "auth">,
  installationId: number,
  repositoryId: number,
  minted: string[],
): (purpose: TokenPurpose, repositories?: string[]) => Promise<MintedToken> {
  return async (purpose, repositories) => {
    const app = await probot.auth();
    // The app JWT rides on the client's own base URL, so GitHub Enterprise and the stand-in work.
    const { data } = await app.rest.apps
      .createInstallationAccessToken({
        installation_id: installationId,
        ...(repositories ? { repositories } : { repository_ids: [repositoryId] }),
        permissions: TOKEN_PERMISSIONS[purpose],
      })
      .catch((error: unknown) => rethrow(error, installationId));
    if (!data.token) {
      throw new GitHubError(`No installation token for installation ${installationId}`, {
        code: "installation_token_missing",
        retryable: false,
      });
    }
    minted.push(data.token);
    return { app, token: data.token, expiresAt: Date.parse(data.expires_at) };
  };
}

/** The run's API token, minted once and again when it nears its expiry or its mint failed. */
function renewingApiToken(mint: (purpose: TokenPurpose) => Promise<MintedToken>): () => Promise<string> {
  let api: Promise<{ token: string; expiresAt: number }> | undefined;
  return async () => {
    const held = api;
    // A mint that failed was reported to its caller; it is minted again below.
    const current = await held?.catch(() => undefined);
    if (api === held && (!current || current.expiresAt - Date.now() < RENEW_BEFORE_MS)) api = undefined;
    api ??= mint("api");
    const pending = api;
    pending.catch(() => {
      if (api === pending) api = undefined; // the next request tries again
    });
    return (await pending).token;
  };
}

async function revokeTokens(probot: Pick<Probot, "auth">, tokens: string[], logger: Logger): Promise<void> {
  if (tokens.length === 0) return;
  const app = await probot.auth().catch((err: unknown) => {
    logger.warn({ err }, "cannot revoke the run's installation tokens (app authentication failed)");
    return null;
  });
  if (!app) return;
  const Client = app.constructor as OctokitClass;
  await Promise.all(
    tokens.map((token) =>
      new Client({ auth: { token } }).request("DELETE /installation/token").catch((error: unknown) => {
        // It expires within the hour anyway; a failed revoke must not fail the run.
        logger.warn({ err: error }, "could not revoke an installation token");
      }),
    ),
  );
}

interface EndpointRequest {
  (options: object): Promise<unknown>;
  endpoint: { merge(route: unknown, parameters?: unknown): { headers: Record<string, string> } };
}

/** An Octokit auth strategy that sends the run's current API token (renewed by `current`). */
function renewingTokenAuth(current: () => Promise<string>) {
  return () =>
    Object.assign(async () => ({ type: "token", tokenType: "installation", token: await current() }), {
      hook: async (request: EndpointRequest, route: unknown, parameters?: unknown) => {
        const endpoint = request.endpoint.merge(route, parameters);
        endpoint.headers.authorization = `token ${await current()}`;
        return request(endpoint);
      },
    });
}

function rethrow(error: unknown, installationId: number): never {
  const status = (error as { status?: number }).status ?? 0;
  throw new GitHubError(`Could not authenticate as installation ${installationId}: ${String(error)}`, {
    code: status === 404 ? "installation_not_found" : "installation_auth_failed",
    retryable: status === 0 || status >= 500 || status === 429,
    hint:
      status === 404
        ? "The app was uninstalled from this repository or account."
        : status === 422
          ? "The repository is no longer among the installation's repositories, or the installation lacks a permission of app.yml (contents, issues and pull requests: write); check the app's installation settings."
          : undefined,
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
  logger: Logger = createWorkerLogger(),
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
  if (id === null) logger.warn(`could not look up the id of ${login}; commits will not link to it`);
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
  // Every failure here means "id unknown" (null): the caller logs it and commits use the bare address.
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
