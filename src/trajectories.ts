/**
 * Full trajectories served by the app under PUBLIC_URL. Trajectories hold repository code (private
 * repositories included), so a link carries an HMAC of the file name: only links the app posted work.
 * The worker writes `NAME.traj` into the trajectory directory; the server reads it from the same
 * directory (one process, or a shared volume).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.traj$/;
export const TRAJECTORY_ROUTE = "/trajectories/";

export function signTrajectoryName(secret: string, name: string): string {
  return createHmac("sha256", secret).update(`agent-fix trajectory ${name}`).digest("hex").slice(0, 32);
}

/** The link to post for `name` (a file name in the trajectory directory, e.g. `octo-demo-3-1700000000.traj`). */
export function trajectoryUrl(publicUrl: string, secret: string, name: string): string {
  if (!NAME.test(name)) throw new Error(`Not a trajectory file name: ${name}`);
  return `${publicUrl.replace(/\/+$/, "")}${TRAJECTORY_ROUTE}${name}?sig=${signTrajectoryName(secret, name)}`;
}

export interface TrajectoryRouteOptions {
  dir: string;
  /** The signing secret; without one nothing is served. */
  secret: string | undefined;
}

/** Serves GET /trajectories/NAME.traj?sig=...; returns false when the request is not for this route. */
export async function serveTrajectory(
  options: TrajectoryRouteOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (req.method !== "GET" || !url.pathname.startsWith(TRAJECTORY_ROUTE)) return false;
  const name = decodeURIComponent(url.pathname.slice(TRAJECTORY_ROUTE.length));
  const given = Buffer.from(url.searchParams.get("sig") ?? "");
  const expected = Buffer.from(
    options.secret && NAME.test(name) ? signTrajectoryName(options.secret, name) : "",
  );
  if (expected.length === 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    res.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
    return true;
  }
  try {
    const body = await readFile(join(options.dir, name));
    res.writeHead(200, {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "private, max-age=3600",
    });
    res.end(body);
  } catch {
    res
      .writeHead(404, { "content-type": "text/plain" })
      .end("Trajectory not found (removed, or written on another host)\n");
  }
  return true;
}
