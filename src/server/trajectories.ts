/**
 * The link to one run's page that the app posts (status comment, pull request summary). Trajectories
 * hold repository code (private repositories included), so a link carries an expiry and an HMAC of the
 * file name and the expiry: only links the app posted work, and only until they expire
 * (AGENT_FIX_TRAJECTORY_LINK_DAYS, 7 by default). It opens that one run's page without a dashboard
 * sign-in; `&format=json` gives the raw trajectory. The page is read from the deployment's store
 * (trajectory-store.ts), so any process serves what any worker wrote.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { sameText } from "../shared/hmac.js";
import { signTrajectoryName, TRAJECTORY_NAME, TRAJECTORY_ROUTE } from "../shared/trajectory-links.js";
import type { TrajectoryStore } from "../shared/trajectory-store.js";
import { sendRunPage } from "./dashboard/index.js";

interface TrajectoryRouteOptions {
  store: TrajectoryStore;
  /** The signing secret; without one nothing is served. */
  secret: string | undefined;
}

type LinkVerdict =
  | { ok: true; name: string; expires: number }
  | { ok: false; status: 404 | 410; message: string };

const NOT_FOUND: LinkVerdict = { ok: false, status: 404, message: "Not found\n" };

/** Checks a request's path and query: a well-formed name, a valid signature, not expired. */
function checkTrajectoryLink(secret: string | undefined, rawUrl: string, now = Date.now()): LinkVerdict {
  let url: URL;
  let name: string;
  try {
    url = new URL(rawUrl, "http://localhost");
    name = decodeURIComponent(url.pathname.slice(TRAJECTORY_ROUTE.length));
  } catch {
    // A malformed escape (`%E0%A4%A`) is a bad link, not a server error.
    return NOT_FOUND;
  }
  const expiresText = url.searchParams.get("expires") ?? "";
  if (!secret || !TRAJECTORY_NAME.test(name) || !/^\d{1,12}$/.test(expiresText)) return NOT_FOUND;
  const expires = Number(expiresText);
  const given = url.searchParams.get("sig") ?? "";
  if (!sameText(given, signTrajectoryName(secret, name, expires))) return NOT_FOUND;
  if (expires * 1000 <= now) {
    return { ok: false, status: 410, message: "This trajectory link has expired.\n" };
  }
  return { ok: true, name, expires };
}

/** Serves GET /trajectories/NAME.traj?expires=...&sig=...; returns false when the request is not for this route. */
export async function serveTrajectory(
  options: TrajectoryRouteOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const path = (req.url ?? "/").split("?")[0] ?? "";
  if (req.method !== "GET" || !path.startsWith(TRAJECTORY_ROUTE)) return false;
  const verdict = checkTrajectoryLink(options.secret, req.url ?? "/");
  if (!verdict.ok) {
    res.writeHead(verdict.status, { "content-type": "text/plain" }).end(verdict.message);
    return true;
  }
  const run = verdict.name.slice(0, -".traj".length);
  if (new URL(req.url ?? "/", "http://localhost").searchParams.get("format") === "json") {
    await sendJson(options.store, res, run, verdict.expires);
  } else {
    await sendRunPage(options.store, res, run);
  }
  return true;
}

async function sendJson(store: TrajectoryStore, res: ServerResponse, run: string, expires: number) {
  const trajectory = await store.load(run);
  if (!trajectory) {
    res
      .writeHead(404, { "content-type": "text/plain" })
      .end("Trajectory not found (older than the retention period)\n");
    return;
  }
  res.writeHead(200, {
    "content-type": "application/json; charset=utf-8",
    // No cache may keep it past the link's expiry.
    "cache-control": `private, max-age=${Math.max(0, Math.min(3600, expires - Math.floor(Date.now() / 1000)))}`,
  });
  res.end(`${JSON.stringify(trajectory, null, 2)}\n`);
}
