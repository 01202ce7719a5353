/**
 * One refresh of a GitHub session's user token at a time, across every request and server process.
 * GitHub takes a refresh token once: two requests of one session (two tabs) refreshing at the same
 * time would both send it, the second would be refused and the session ended. So the refresh runs
 * under a short Redis lock (SET NX PX) on the session; a request that finds the lock taken waits for
 * it and then uses the token the holder stored. The lock outlives the token request's timeout, so
 * it cannot expire while its holder's refresh is still on its way to GitHub.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { requestUserToken, TOKEN_REQUEST_TIMEOUT_MS, type UserToken } from "./github-token.js";

export interface StoredSession {
  login: string;
  token: string;
  /** When the token expires (ms). */
  expiresAt: number;
  refreshToken?: string;
}

interface RefreshConfig {
  clientId: string;
  clientSecret: string;
  webUrl: string;
  redis: Redis;
}

const LOCK_MS = 2 * TOKEN_REQUEST_TIMEOUT_MS;
/** How often a waiting request looks whether the refresh is done. */
const WAIT_STEP_MS = 50;
/** Deletes the lock only if it is still this holder's (it may have expired and been taken since). */
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;

export function storedSession(login: string, issued: UserToken): StoredSession {
  return {
    login,
    token: issued.token,
    expiresAt: Date.now() + issued.expiresIn * 1000,
    ...(issued.refresh ? { refreshToken: issued.refresh.token } : {}),
  };
}

export async function readSession(redis: Redis, key: string): Promise<StoredSession | null> {
  const raw = await redis.get(key);
  return raw ? (JSON.parse(raw) as StoredSession) : null;
}

/**
 * The session with a token newer than `seen`'s: refreshed here, or by whichever request held the
 * lock meanwhile. Null when the session is over (refresh refused, signed out, expired).
 */
export async function refreshOnce(
  config: RefreshConfig,
  key: string,
  seen: StoredSession,
): Promise<StoredSession | null> {
  const lock = `${key}:refreshing`;
  const holder = randomBytes(16).toString("hex");
  for (;;) {
    const latest = await readSession(config.redis, key);
    if (!latest || latest.token !== seen.token) return latest;
    if ((await config.redis.set(lock, holder, "PX", LOCK_MS, "NX")) === "OK") {
      try {
        // Read again under the lock: the previous holder may have stored between the read and the lock.
        const current = await readSession(config.redis, key);
        if (!current || current.token !== seen.token) return current;
        return await refreshSession(config, key, current);
      } finally {
        await config.redis.eval(RELEASE, 1, lock, holder);
      }
    }
    await sleep(WAIT_STEP_MS);
  }
}

/** The session with a new token from its refresh token (GitHub revokes the old pair); null ends it. */
async function refreshSession(
  config: RefreshConfig,
  key: string,
  session: StoredSession,
): Promise<StoredSession | null> {
  const issued = session.refreshToken
    ? await requestUserToken(config, { refreshToken: session.refreshToken })
    : { error: "no refresh token" };
  if ("error" in issued) {
    await config.redis.del(key);
    return null;
  }
  const next = storedSession(session.login, issued);
  // The session's end stays where it was (a refresh extends the token, not the sign-in); XX: a session
  // signed out meanwhile is not brought back.
  const kept = await config.redis.set(key, JSON.stringify(next), "KEEPTTL", "XX");
  return kept === "OK" ? next : null;
}
