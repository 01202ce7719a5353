import type { Probot, ProbotOctokit } from "probot";
import { GitHubError } from "../../../src/shared/errors.js";
import { ORG_CONFIG_REPO } from "../../config/org-defaults.js";
import { createWorkerLogger, type Logger } from "../../log.js";

/** What a run's tokens are for: each gets only the permissions of its step. */
type TokenPurpose = "clone" | "push" | "config" | "api" | "ci" | "checks";

/**
 * The permissions each token is minted with (metadata: read comes with every token): cloning reads
 * contents, pushing writes them, the API client writes comments, reactions and the pull request, a CI
 * round's reader only reads the repository's checks, statuses and Actions logs, and the check run client
 * writes the app's own check run (apart: an installation that never granted `checks: write` refuses that
 * token alone, and the run goes on without its check run).
 */
export const TOKEN_PERMISSIONS = {
  clone: { contents: "read" },
  push: { contents: "write" },
  config: { contents: "read" },
  api: { issues: "write", pull_requests: "write" },
  // A CI round reads the failing checks: check runs and annotations, commit statuses, Actions jobs and logs.
  ci: { checks: "read", statuses: "read", actions: "read" },
  checks: { checks: "write" },
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
  /** A client that may only read checks, commit statuses and GitHub Actions runs, jobs and logs (CI rounds). */
  ciReader(): Promise<ProbotOctokit>;
  /** A client that may only write check runs (the app's own "agent-fix / tests"). */
  checksWriter(): Promise<ProbotOctokit>;
  /** A client that may write contents, as the push token may: GitHub's merge of a base into the app's branch. */
  contentsWriter(): Promise<ProbotOctokit>;
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

/** Each run's credentials over Probot's app authentication (GHE_HOST / GHE_PROTOCOL decide where it points). */
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
        async ciReader() {
          const { app, token } = await mint("ci");
          return new (app.constructor as OctokitClass)({ auth: { token } });
        },
        async checksWriter() {
          const { app, token } = await mint("checks");
          return new (app.constructor as OctokitClass)({ auth: { token } });
        },
        async contentsWriter() {
          const { app, token } = await mint("push");
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
