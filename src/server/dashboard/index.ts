/**
 * The operator's dashboard under one path prefix (AGENT_FIX_DASHBOARD_PATH, /dashboard): the queue
 * through Bull Board (read-only: a run is cancelled by its label, which also cleans up its sandboxes
 * and status comment), the stored runs, and one page per run. Every page but the sign-in needs a
 * session: the operator's shared secret (session.ts) or GitHub (github-signin.ts, github-session.ts),
 * whose viewers see the runs of the repositories their GitHub account can read. With neither
 * configured the dashboard is not mounted at all.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import express from "express";
import type { TrajectoryStore } from "../../shared/trajectory-store.js";
import {
  clearedGitHubCookie,
  endGitHubSession,
  type GitHubSignInConfig,
  githubViewer,
  type Viewer,
} from "./github-session.js";
import { finishSignIn, startSignIn } from "./github-signin.js";
import { type Html, html, sendPage } from "./html.js";
import { renderRunPage } from "./run-page.js";
import { navigation, type RunsPage, renderRunsList, renderSignIn, type SignInMethods } from "./runs-page.js";
import { clearedCookie, type SessionOptions, secretMatches, sessionCookie, signedIn } from "./session.js";
import type { SignInLimits } from "./sign-in-limit.js";

export type DashboardHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

interface DashboardOptions extends SessionOptions {
  queue: Queue;
  store: TrajectoryStore;
  /** "Sign in with GitHub", when the GitHub App's client id and secret are configured. */
  github?: GitHubSignInConfig;
  /** Sign-in attempts per client address (sign-in-limit.ts). */
  limits?: SignInLimits;
}

const LOGIN_MAX_BYTES = 4096;

export function createDashboard(options: DashboardOptions): DashboardHandler {
  const prefix = options.path;
  const board = bullBoard(`${prefix}/queue`, options.queue);
  return async (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return false;
    const route = path.slice(prefix.length) || "/";
    if (await signInRoute(options, route, req, res)) return true;
    const viewer = await viewerOf(options, req);
    if (!viewer) {
      sendPage(res, 401, "Sign in", renderSignIn(prefix, signInMethods(options), false));
      return true;
    }
    const nav = navigation(prefix, viewer);
    if (route === "/queue" || route.startsWith("/queue/")) {
      // Bull Board shows every installation's jobs (repositories, issues): operators only.
      if (viewer.operator) board(req, res);
      else
        sendPage(
          res,
          403,
          "Operators only",
          html`<h1>Operators only</h1><p>The queue shows every installation's jobs; it is for the operator (AGENT_FIX_DASHBOARD_SECRET, or a login in AGENT_FIX_DASHBOARD_OPERATORS).</p>`,
          nav,
        );
      return true;
    }
    if (req.method === "GET" && route === "/") {
      const after = new URL(req.url ?? "/", "http://localhost").searchParams.get("after") ?? undefined;
      const page = await visibleRuns(options.store, viewer, after);
      sendPage(res, 200, "Runs", renderRunsList(prefix, page, viewer.operator), nav);
      return true;
    }
    const run = runName(route);
    if (req.method === "GET" && run) {
      // A run the viewer may not see is answered exactly as a run that does not exist.
      const summary = viewer.operator ? null : await options.store.summary(run);
      if (!viewer.operator && !(summary && (await viewer.canSee(summary)))) sendRunMissing(res, run, nav);
      else await sendRunPage(options.store, res, run, nav);
      return true;
    }
    sendPage(res, 404, "Not found", html`<h1>Not found</h1>`, nav);
    return true;
  };
}

function signInMethods(options: DashboardOptions): SignInMethods {
  return { secret: options.secret !== undefined, github: options.github !== undefined };
}

/** The sign-in and sign-out routes; false for every other route. */
async function signInRoute(
  options: DashboardOptions,
  route: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const may = (limit: keyof SignInLimits) => options.limits?.[limit](req, res) ?? Promise.resolve(true);
  if (req.method === "POST" && route === "/login" && options.secret) {
    if (await may("failures")) await login(options, req, res);
  } else if (req.method === "GET" && route === "/login" && options.github) {
    if (await may("starts")) await startSignIn(options, options.github, req, res);
  } else if (req.method === "GET" && route === "/callback" && options.github) {
    if (await may("failures")) await finishSignIn(options, options.github, req, res);
  } else if (req.method === "POST" && route === "/logout") {
    if (options.github) await endGitHubSession(options.github, req);
    const cookies = [clearedCookie(options), clearedGitHubCookie(options)];
    res.writeHead(303, { location: `${options.path}/`, "set-cookie": cookies }).end();
  } else return false;
  return true;
}

async function viewerOf(options: DashboardOptions, req: IncomingMessage): Promise<Viewer | null> {
  if (signedIn(options, req)) return { login: null, operator: true, canSee: async () => true };
  return options.github ? githubViewer(options.github, req) : null;
}

/** Runs per page of the list; older ones are on the next pages. */
const PAGE_SIZE = 200;

/** A page of the stored runs of the repositories the viewer can read (GitHub asked once per repository). */
async function visibleRuns(store: TrajectoryStore, viewer: Viewer, after?: string): Promise<RunsPage> {
  // One more than a page: whether there is an older page.
  const fetched = await store.list(PAGE_SIZE + 1, after);
  const runs = fetched.slice(0, PAGE_SIZE);
  const older = fetched.length > PAGE_SIZE ? (runs.at(-1)?.name ?? null) : null;
  const paged = { older, first: after === undefined };
  if (viewer.operator) return { runs, ...paged };
  // By the repository's id: whoever holds a run's repository name now is not who the run was for.
  const ids = [...new Set(runs.flatMap((run) => (run.repoId === undefined ? [] : [run.repoId])))];
  const allowed = new Set(
    (
      await Promise.all(
        ids.map(async (repoId) => {
          const run = runs.find((r) => r.repoId === repoId);
          return run && (await viewer.canSee(run)) ? repoId : null;
        }),
      )
    ).filter((id) => id !== null),
  );
  return { runs: runs.filter((run) => run.repoId !== undefined && allowed.has(run.repoId)), ...paged };
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

/** A stored run's page, or 404; also what a signed trajectory link shows (src/server/trajectories.ts). */
export async function sendRunPage(
  store: TrajectoryStore,
  res: ServerResponse,
  name: string,
  nav?: Html,
): Promise<void> {
  const trajectory = await store.load(name);
  if (!trajectory) return sendRunMissing(res, name, nav);
  sendPage(res, 200, `Run ${name}`, renderRunPage(trajectory, `Run ${name}`), nav);
}

function sendRunMissing(res: ServerResponse, name: string, nav?: Html): void {
  const body = html`<h1>Run not found</h1><p>No stored trajectory named <code>${name}</code> that you may see: it may be older than the retention period (AGENT_FIX_TRAJECTORY_RETENTION_DAYS), or of a repository your GitHub account cannot read.</p>`;
  sendPage(res, 404, "Run not found", body, nav);
}

async function login(options: DashboardOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readSmallBody(req);
  const secret = body === null ? "" : (new URLSearchParams(body).get("secret") ?? "");
  if (!secret || !secretMatches(options, secret)) {
    return sendPage(res, 401, "Sign in", renderSignIn(options.path, signInMethods(options), true));
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
