/**
 * The operator's dashboard under one path prefix (AGENT_FIX_DASHBOARD_PATH, /dashboard): the queue
 * through Bull Board (read-only: a run is cancelled by its label, which also cleans up its sandboxes
 * and status comment), the stored runs, and one page per run. Every page but the sign-in needs a
 * session (session.ts); with no AGENT_FIX_DASHBOARD_SECRET the dashboard is not mounted at all.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import express from "express";
import type { TrajectoryStore } from "../trajectory-store.js";
import { html, sendPage } from "./html.js";
import { renderRunPage } from "./run-page.js";
import { navigation, renderRunsList, renderSignIn } from "./runs-page.js";
import { clearedCookie, type SessionOptions, secretMatches, sessionCookie, signedIn } from "./session.js";

export type DashboardHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

interface DashboardOptions extends SessionOptions {
  queue: Queue;
  store: TrajectoryStore;
}

const LOGIN_MAX_BYTES = 4096;

export function createDashboard(options: DashboardOptions): DashboardHandler {
  const prefix = options.path;
  const board = bullBoard(`${prefix}/queue`, options.queue);
  return async (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return false;
    const route = path.slice(prefix.length) || "/";
    if (req.method === "POST" && route === "/login") {
      await login(options, req, res);
      return true;
    }
    if (req.method === "POST" && route === "/logout") {
      res.writeHead(303, { location: `${prefix}/`, "set-cookie": clearedCookie(options) }).end();
      return true;
    }
    if (!signedIn(options, req)) {
      sendPage(res, 401, "Sign in", renderSignIn(prefix, false));
      return true;
    }
    if (route === "/queue" || route.startsWith("/queue/")) {
      board(req, res);
      return true;
    }
    if (req.method === "GET" && route === "/") {
      sendPage(res, 200, "Runs", renderRunsList(prefix, await options.store.list()), navigation(prefix));
      return true;
    }
    const run = runName(route);
    if (req.method === "GET" && run) {
      await sendRunPage(options.store, res, run, navigation(prefix));
      return true;
    }
    sendPage(res, 404, "Not found", html`<h1>Not found</h1>`, navigation(prefix));
    return true;
  };
}

/** The run a `/runs/NAME` path names; a malformed escape names none (404, not a server error). */
function runName(route: string): string | undefined {
  const encoded = /^\/runs\/([^/]+)$/.exec(route)?.[1];
  try {
    return encoded === undefined ? undefined : decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

/** A stored run's page, or 404; also what a signed trajectory link shows (src/trajectories.ts). */
export async function sendRunPage(
  store: TrajectoryStore,
  res: ServerResponse,
  name: string,
  nav?: ReturnType<typeof navigation>,
): Promise<void> {
  const trajectory = await store.load(name);
  if (!trajectory) {
    const body = html`<h1>Run not found</h1><p>No stored trajectory named <code>${name}</code>: it may be older than the retention period (AGENT_FIX_TRAJECTORY_RETENTION_DAYS).</p>`;
    return sendPage(res, 404, "Run not found", body, nav);
  }
  sendPage(res, 200, `Run ${name}`, renderRunPage(trajectory, `Run ${name}`), nav);
}

async function login(options: DashboardOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readSmallBody(req);
  const secret = body === null ? "" : (new URLSearchParams(body).get("secret") ?? "");
  if (!secret || !secretMatches(options, secret)) {
    return sendPage(res, 401, "Sign in", renderSignIn(options.path, true));
  }
  res.writeHead(303, { location: `${options.path}/`, "set-cookie": sessionCookie(options) }).end();
}

/** The body of a sign-in form; null past LOGIN_MAX_BYTES (the rest is not read). */
function readSmallBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > LOGIN_MAX_BYTES) {
        req.pause();
        return resolve(null);
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function bullBoard(basePath: string, queue: Queue): (req: IncomingMessage, res: ServerResponse) => void {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(basePath);
  createBullBoard({
    queues: [new BullMQAdapter(queue, { readOnlyMode: true })],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: "agent-fix queue" } },
  });
  const app = express();
  app.disable("x-powered-by");
  app.use(basePath, adapter.getRouter());
  return (req, res) => app(req as express.Request, res as express.Response);
}
