/**
 * The signed, expiring link to one run's page that the worker posts (status comment, pull request
 * summary) and the webhook process serves (src/server/trajectories.ts): an HMAC of the file name and the
 * expiry, so only links the app posted work, and only until they expire.
 */
import { hmacSha256 } from "./hmac.js";

/** A trajectory file name, as a run names it (`OWNER-REPO-ISSUE-MS.traj`). */
export const TRAJECTORY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.traj$/;
export const TRAJECTORY_ROUTE = "/trajectories/";
const DEFAULT_TRAJECTORY_LINK_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The signature of a link to `name` that works until `expires` (Unix seconds). */
export function signTrajectoryName(secret: string, name: string, expires: number): string {
  return hmacSha256(secret, `agent-fix trajectory ${name} until ${expires}`, "hex").slice(0, 32);
}

interface TrajectoryLinkOptions {
  /** How long the link works; default DEFAULT_TRAJECTORY_LINK_DAYS days. */
  ttlMs?: number;
  now?: number;
}

/** The link to post for `name` (a file name in the trajectory directory, e.g. `octo-demo-3-1700000000.traj`). */
export function trajectoryUrl(
  publicUrl: string,
  secret: string,
  name: string,
  options: TrajectoryLinkOptions = {},
): string {
  if (!TRAJECTORY_NAME.test(name)) throw new Error(`Not a trajectory file name: ${name}`);
  const ttlMs = options.ttlMs ?? DEFAULT_TRAJECTORY_LINK_DAYS * DAY_MS;
  const expires = Math.floor(((options.now ?? Date.now()) + ttlMs) / 1000);
  const sig = signTrajectoryName(secret, name, expires);
  return `${publicUrl.replace(/\/+$/, "")}${TRAJECTORY_ROUTE}${name}?expires=${expires}&sig=${sig}`;
}
