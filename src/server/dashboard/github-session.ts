/**
 * Sessions of viewers signed in with GitHub. The user's token is kept in Redis under a hash of a random
 * session id; the cookie holds only the id, and the token is never logged. An expiring user token (8
 * hours) is refreshed with its refresh token when it has less than REFRESH_MARGIN left or GitHub answers
 * 401 (once for all of a session's requests at a time: github-refresh.ts), so a session lasts
 * SESSION_SECONDS; without a refresh token it lasts the token's own lifetime.
 * Whether the viewer may see a repository's runs is what GitHub answers the user's token for GET
 * /repositories/{id}, the id stored with the run (a user-to-server token reaches a repository only when
 * both the user and the app's installation do; 404 = no access), cached per session for a minute. By
 * id, never by the name stored with the run: whoever re-creates a deleted repository's name, or takes
 * a renamed one's, can read the new repository of that name, not the one the runs were of.
 */
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Redis } from "ioredis";
import { dashboardSessionKey } from "../../shared/queue/keys.js";
import { readSession, refreshOnce, type StoredSession, storedSession } from "./github-refresh.js";
import type { UserToken } from "./github-token.js";
import type { SessionOptions } from "./session.js";

const COOKIE = "agent_fix_dashboard_gh";
/** A session's most, as the shared secret's (session.ts). */
const SESSION_SECONDS = 12 * 60 * 60;
/** A token with less than this left is refreshed before it is used. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;
const ACCESS_CACHE_SECONDS = 60;

export interface GitHubSignInConfig {
  clientId: string;
  clientSecret: string;
  /** GitHub's web URL (github.com or GHE) and REST API URL. */
  webUrl: string;
  apiUrl: string;
  /** PUBLIC_URL, when set: the base of the callback URL. */
  publicUrl?: string;
  /** Lower-case logins that see every run and the queue. */
  operators: string[];
  redis: Redis;
  keyPrefix: string;
}

/** Who is looking at the dashboard. */
export interface Viewer {
  /** The GitHub login; null for the shared secret's sessions. */
  login: string | null;
  /** Sees every run and the queue. */
  operator: boolean;
  /** Whether the viewer may see a run of this repository (by its id; a run without one: operators only). */
  canSee(run: { repoId?: number | undefined }): Promise<boolean>;
}

const sessionKey = (config: GitHubSignInConfig, id: string) =>
  dashboardSessionKey(config.keyPrefix, createHash("sha256").update(id).digest("hex"));

function api(config: GitHubSignInConfig, token: string, path: string): Promise<Response> {
  return fetch(`${config.apiUrl}${path}`, {
    headers: {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${token}`,
      "x-github-api-version": "2022-11-28",
    },
  });
}

/** Reads the user's login and stores the session; `cookie` builds its Set-Cookie value. */
export async function createGitHubSession(
  config: GitHubSignInConfig,
  issued: UserToken,
): Promise<{ cookie(options: SessionOptions): string } | { error: string }> {
  const answer = await api(config, issued.token, "/user").catch(() => null);
  if (!answer?.ok)
    return { error: `GitHub did not say who signed in (GET /user: ${answer?.status ?? "unreachable"})` };
  const user = (await answer.json()) as { login?: unknown };
  if (typeof user.login !== "string") return { error: "GitHub's GET /user answer has no login" };
  const id = randomBytes(32).toString("base64url");
  const lasts = issued.refresh ? Math.min(SESSION_SECONDS, issued.refresh.expiresIn) : issued.expiresIn;
  const seconds = Math.max(60, Math.min(lasts, SESSION_SECONDS));
  await config.redis.set(
    sessionKey(config, id),
    JSON.stringify(storedSession(user.login, issued)),
    "EX",
    seconds,
  );
  return {
    cookie: (options) =>
      `${COOKIE}=${id}; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=${seconds}${options.secure ? "; Secure" : ""}`,
  };
}

function sessionId(req: IncomingMessage): string | undefined {
  return new RegExp(`(?:^|;\\s*)${COOKIE}=([A-Za-z0-9_-]{43})(?:;|$)`).exec(req.headers.cookie ?? "")?.[1];
}

/** The GitHub viewer of a request, or null without a live session. */
export async function githubViewer(config: GitHubSignInConfig, req: IncomingMessage): Promise<Viewer | null> {
  const id = sessionId(req);
  if (!id) return null;
  const key = sessionKey(config, id);
  const session = await readSession(config.redis, key);
  if (!session) return null;
  const tokens = sessionTokens(config, key, session);
  if (!(await tokens.fresh())) return null;
  const { login } = tokens.current();
  const operator = config.operators.includes(login.toLowerCase());
  return {
    login,
    operator,
    canSee: (run) =>
      operator
        ? Promise.resolve(true)
        : run.repoId === undefined
          ? Promise.resolve(false)
          : canRead(config, key, tokens, run.repoId),
  };
}

interface SessionTokens {
  current(): StoredSession;
  /** False when the token is (nearly) expired and could not be refreshed: the session is over. */
  fresh(): Promise<boolean>;
  /** After a 401 for `used`: a refreshed token (once for all callers), or null. */
  renewed(used: string): Promise<string | null>;
}

/** The session's token, refreshed at most once at a time (within a request here, across them: github-refresh.ts). */
function sessionTokens(config: GitHubSignInConfig, key: string, start: StoredSession): SessionTokens {
  let session = start;
  let refreshing: Promise<boolean> | undefined;
  const refresh = () => {
    refreshing ??= refreshOnce(config, key, session).then((next) => {
      refreshing = undefined;
      if (next) session = next;
      return next !== null;
    });
    return refreshing;
  };
  return {
    current: () => session,
    fresh: async () => session.expiresAt - Date.now() > REFRESH_MARGIN_MS || refresh(),
    renewed: async (used) => {
      if (session.token !== used) return session.token;
      return (await refresh()) ? session.token : null;
    },
  };
}

async function canRead(
  config: GitHubSignInConfig,
  key: string,
  tokens: SessionTokens,
  repoId: number,
): Promise<boolean> {
  if (!Number.isSafeInteger(repoId) || repoId <= 0) return false;
  const cacheKey = `${key}:repository:${repoId}`;
  const cached = await config.redis.get(cacheKey);
  if (cached !== null) return cached === "1";
  const used = tokens.current().token;
  let answer = await api(config, used, `/repositories/${repoId}`).catch(() => null);
  if (answer?.status === 401) {
    // Expired or revoked before its time: once more with a refreshed token.
    const token = await tokens.renewed(used);
    answer = token ? await api(config, token, `/repositories/${repoId}`).catch(() => null) : null;
  }
  // Only GitHub's own answers are cached; an unreachable GitHub is asked again next time.
  if (!answer) return false;
  const allowed = answer.status === 200;
  if (answer.status === 200 || answer.status === 404 || answer.status === 403) {
    await config.redis.set(cacheKey, allowed ? "1" : "0", "EX", ACCESS_CACHE_SECONDS);
  }
  return allowed;
}

/** Signs the request's GitHub session out (its stored token is deleted). */
export async function endGitHubSession(config: GitHubSignInConfig, req: IncomingMessage): Promise<void> {
  const id = sessionId(req);
  if (id) await config.redis.del(sessionKey(config, id));
}

export function clearedGitHubCookie(options: SessionOptions): string {
  return `${COOKIE}=; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=0`;
}
