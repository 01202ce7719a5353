/**
 * Installation tokens scoped and revoked as GitHub documents it (REST "Create an installation access
 * token for an app" and "Revoke an installation access token", @octokit/openapi): `repository_ids` /
 * `repositories` narrow a token to those repositories, `permissions` to those permissions (never more
 * than the app was granted, 422 otherwise); a repository outside the token's scope is 404 Not Found, a
 * permission it lacks is 403 "Resource not accessible by integration"; `DELETE /installation/token`
 * answers 204 and the token stops working (401 Bad credentials). An installation is granted what the
 * app asks for in app.yml, or what a test sets (GitHubServer.setInstallationPermissions); every token
 * of it, scoped or not, is held to that.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { repoJson } from "./render.js";
import type { Route, RouteContext, RouteResult } from "./routes.js";
import type { StandInRepo, StandInState } from "./state.js";

type PermissionLevel = "read" | "write";
type Permissions = Record<string, PermissionLevel>;

/** What the app asks for in app.yml (default_permissions), plus metadata, which every token has. */
const APP_PERMISSIONS: Permissions = {
  metadata: "read",
  ...(
    parse(readFileSync(new URL("../../../app.yml", import.meta.url), "utf8")) as {
      default_permissions: Permissions;
    }
  ).default_permissions,
};

/** What an installation was granted: what a test set, else what the app asks for. */
export function installationPermissions(state: StandInState, installationId: number): Permissions {
  return state.installationPermissions.get(installationId) ?? APP_PERMISSIONS;
}

const DOCS = "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app";
const invalid = (message: string): RouteResult => ({
  status: 422,
  body: { message, documentation_url: DOCS, status: "422" },
});

const satisfies = (granted: PermissionLevel | undefined, wanted: PermissionLevel) =>
  granted === "write" || (granted === "read" && wanted === "read");

/** POST /app/installations/{id}/access_tokens with GitHub's body parameters. */
function mintScopedToken(ctx: RouteContext): RouteResult {
  const installationId = Number(ctx.params[0]);
  const visible = ctx.state.repos.filter((r) => r.installationId === installationId);
  if (visible.length === 0) return { status: 404, body: { message: "Not Found" } };
  const {
    repository_ids: ids,
    repositories: names,
    permissions,
  } = ctx.body as {
    repository_ids?: unknown;
    repositories?: unknown;
    permissions?: unknown;
  };
  let selected: StandInRepo[] | null = null;
  if (ids !== undefined || names !== undefined) {
    const byId = Array.isArray(ids) ? ids.map((id) => visible.find((r) => r.id === id)) : [];
    const byName = Array.isArray(names) ? names.map((name) => visible.find((r) => r.name === name)) : [];
    const all = [...byId, ...byName];
    if (all.length === 0 || all.some((r) => r === undefined)) {
      return invalid(
        "There is at least one repository that does not exist or is not accessible to the parent installation.",
      );
    }
    selected = [...new Set(all as StandInRepo[])];
  }
  const installed = installationPermissions(ctx.state, installationId);
  let granted: Permissions = { ...installed };
  if (permissions !== undefined) {
    const asked = permissions as Record<string, unknown>;
    for (const [name, level] of Object.entries(asked)) {
      if ((level !== "read" && level !== "write") || !satisfies(installed[name], level)) {
        return invalid("The permissions requested are not granted to this installation.");
      }
    }
    granted = { metadata: "read", ...(asked as Permissions) };
  }
  const minted = ctx.issueToken(installationId);
  const issued = ctx.state.tokens.get(minted.token);
  if (issued) issued.scope = { repositoryIds: selected?.map((r) => r.id) ?? null, permissions: granted };
  return {
    status: 201,
    body: {
      ...minted,
      permissions: granted,
      repository_selection: selected ? "selected" : "all",
      ...(selected ? { repositories: selected.map((r) => repoJson(ctx.base, r)) } : {}),
    },
  };
}

export function tokenRoutes(): Route[] {
  return [
    {
      method: "POST",
      pattern: /^\/app\/installations\/(\d+)\/access_tokens$/,
      auth: "app",
      handler: mintScopedToken,
    },
    {
      method: "DELETE",
      pattern: /^\/installation\/token$/,
      auth: "installation",
      handler: (ctx) => {
        if (ctx.token) revokeToken(ctx.state, ctx.token);
        return { status: 204 };
      },
    },
  ];
}

/** Revoked tokens are remembered (tests ask whether a token was revoked), and no longer accepted. */
function revokeToken(state: StandInState, token: string): void {
  const issued = state.tokens.get(token);
  if (issued) {
    issued.revokedAt = Date.now();
    issued.expiresAt = 0;
  }
}

// Which permission a REST path needs (GitHub's "Permissions required for GitHub Apps"); null: none.
const PATH_PERMISSIONS: [RegExp, string[]][] = [
  [
    /^\/repos\/[^/]+\/[^/]+\/(?:check-runs|check-suites|commits\/[^/]+\/check-(?:runs|suites))(?:\/|$)/,
    ["checks"],
  ],
  [/^\/repos\/[^/]+\/[^/]+\/(?:statuses\/|commits\/[^/]+\/status(?:es)?$)/, ["statuses"]],
  [/^\/repos\/[^/]+\/[^/]+\/actions\//, ["actions"]],
  [/^\/repos\/[^/]+\/[^/]+\/(?:compare|merges)(?:\/|$)/, ["contents"]],
  [/^\/repos\/[^/]+\/[^/]+$/, ["metadata"]],
  [/^\/repositories\/\d+$/, ["metadata"]],
  [/^\/repos\/[^/]+\/[^/]+\/collaborators\//, ["metadata"]],
  [/^\/repos\/[^/]+\/[^/]+\/(?:contents|branches|git|commits)(?:\/|$)/, ["contents"]],
  // Comments and reactions on an issue or a pull request's conversation: either permission.
  [/^\/repos\/[^/]+\/[^/]+\/issues\/(?:comments|\d+\/comments|\d+\/reactions)/, ["issues", "pull_requests"]],
  [/^\/repos\/[^/]+\/[^/]+\/issues(?:\/|$)/, ["issues"]],
  [/^\/repos\/[^/]+\/[^/]+\/pulls(?:\/|$)/, ["pull_requests"]],
];

/**
 * Whether an installation token allows `method path`, by its scope or else its installation's
 * permissions: null when it does, else GitHub's answer (404 for a repository outside the token's
 * scope, 403 for a missing permission).
 */
export function scopeVerdict(
  state: StandInState,
  token: string,
  method: string,
  path: string,
): RouteResult | null {
  const issued = state.tokens.get(token);
  if (!issued) return null;
  const scope = issued.scope ?? {
    repositoryIds: null,
    permissions: installationPermissions(state, issued.installationId),
  };
  const repoMatch = /^\/repos\/([^/]+)\/([^/]+)/.exec(path);
  const idMatch = /^\/repositories\/(\d+)/.exec(path);
  const repo = repoMatch
    ? state.repo(repoMatch[1] ?? "", repoMatch[2] ?? "")
    : idMatch
      ? state.repos.find((r) => r.id === Number(idMatch[1]))
      : undefined;
  if (repo && scope.repositoryIds && !scope.repositoryIds.includes(repo.id)) {
    return { status: 404, body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" } };
  }
  const names = PATH_PERMISSIONS.find(([pattern]) => pattern.test(path))?.[1];
  if (!names) return null;
  const level: PermissionLevel = method === "GET" ? "read" : "write";
  if (names.some((name) => satisfies(scope.permissions[name], level))) return null;
  return {
    status: 403,
    body: {
      message: "Resource not accessible by integration",
      documentation_url: "https://docs.github.com/rest",
    },
  };
}

/** git over HTTP: a repository outside the scope is not found; a push needs contents: write. */
export function gitScopeVerdict(
  state: StandInState,
  token: string,
  repo: StandInRepo,
  push: boolean,
): "ok" | "not_found" | "forbidden" {
  const issued = state.tokens.get(token);
  if (!issued) return "ok";
  const scope = issued.scope ?? {
    repositoryIds: null,
    permissions: installationPermissions(state, issued.installationId),
  };
  if (scope.repositoryIds && !scope.repositoryIds.includes(repo.id)) return "not_found";
  return satisfies(scope.permissions.contents, push ? "write" : "read") ? "ok" : "forbidden";
}
