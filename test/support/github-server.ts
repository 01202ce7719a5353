/**
 * A real HTTP server standing in for GitHub (Enterprise-style: REST under /api/v3, git under
 * /OWNER/REPO.git on the same host), for Probot through GHE_HOST/GHE_PROTOCOL and for the worker.
 * App JWTs are verified against the app's key; installation tokens expire and are checked on every
 * request, git included. Everything done is recorded in `state` for tests to assert on.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProbotOctokit } from "probot";
import { FreshTokenRefusal, installPushRules, PushFaults, type PushRule } from "./git-refusals.js";
import { createBareRepo, handleGitRequest, listRefs, type PushRecord, tokenFrom } from "./git-server.js";
import { type AppKeys, checkAppJwt, checkToken, generateAppKeys, issueToken } from "./github/auth.js";
import { CiState } from "./github/ci-state.js";
import { commitOnBranch } from "./github/git-history.js";
import { StandInOAuth } from "./github/oauth.js";
import { type Actor, type RouteContext, routes } from "./github/routes.js";
import { type StandInIssue, type StandInPull, StandInState, type StandInUser } from "./github/state.js";
import { gitScopeVerdict, scopeVerdict } from "./github/token-scopes.js";
import { userTokenAnswer } from "./github/user-api.js";

export * from "./github/ci-state.js";
export * from "./github/state.js";

/**
 * Probot's Octokit without client-side throttling (which spaces writes a second apart for GitHub's
 * secondary rate limits) and without retries: for tests against the stand-in.
 */
export const StandInOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  // A function, not an object: Probot's own defaults would otherwise replace `throttle` whole.
  throttle: { ...(options.throttle as object), enabled: false },
  retry: { enabled: false },
}));

interface GitHubServerOptions {
  appId?: number;
  appSlug?: string;
  /** Lifetime of installation tokens; GitHub's is one hour. */
  tokenTtlMs?: number;
}

interface AddRepoOptions {
  owner: string;
  name: string;
  /** The repository's id, when a test must know it first (an operator's config binds to it); else the next. */
  id?: number;
  /** Paths to contents: text, or bytes for a file that is not (a real project's images, archives). */
  files: Record<string, string | Uint8Array>;
  defaultBranch?: string;
  installationId?: number;
  /** login -> admin | maintain | write | triage | read */
  permissions?: Record<string, string>;
}

interface Fault {
  method: string;
  path: RegExp;
  status: number;
  remaining: number;
  /** GitHub's answer; a generic message when absent. */
  body?: unknown;
  /** Headers of the answer, when GitHub documents some (e.g. retry-after). */
  headers?: Record<string, string>;
  /** Only requests of this installation (its tokens, or /app/installations/ID/...): runs side by side. */
  installationId?: number;
}

/** Which requests a fault hits, beyond method and path. */
interface FaultScope {
  installationId?: number;
}

/**
 * GitHub's answer when a secondary rate limit is hit: 403 or 429, a message naming the secondary rate
 * limit, and `retry-after` (seconds) when GitHub says how long to wait.
 * https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
 */
function secondaryRateLimit(status: 403 | 429, retryAfterSeconds?: number) {
  return {
    status,
    body: {
      message:
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.",
      documentation_url:
        "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
      status: String(status),
    },
    headers: {
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4990",
      "x-ratelimit-used": "10",
      "x-ratelimit-resource": "core",
      ...(retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) }),
    },
  };
}

export class GitHubServer {
  readonly state = new StandInState();
  readonly pushes: PushRecord[] = [];
  readonly appId: number;
  readonly appSlug: string;
  readonly keys: AppKeys;
  /** The app's bot user: author of its comments and pull requests. */
  readonly bot: StandInUser;
  tokenTtlMs: number;
  /** Set `uses` to refuse every new token for its first git requests (GitHub's propagation delay). */
  readonly freshTokens = new FreshTokenRefusal();
  /** Pushes answered with a server error, or held without an answer (see git-refusals.ts). */
  readonly pushFaults = new PushFaults();
  /** The app's OAuth web flow, its users and their ghu_ tokens (github/oauth.ts). */
  readonly oauth = new StandInOAuth();
  /** The repositories' CI: check runs and suites, statuses, workflow runs, jobs and logs (github/ci-state.ts). */
  readonly ci = new CiState(this.state, (owner, repo) => this.repoDir(owner, repo));
  private server: Server | undefined;
  private gitRoot = "";
  private baseUrl = "";
  private faults: Fault[] = [];
  private heldAnswers: HeldAnswer[] = [];

  constructor(options: GitHubServerOptions = {}) {
    this.appId = options.appId ?? 4711;
    this.appSlug = options.appSlug ?? "agent-fix-test";
    this.tokenTtlMs = options.tokenTtlMs ?? 60 * 60 * 1000;
    this.keys = generateAppKeys();
    this.bot = { login: `${this.appSlug}[bot]`, id: 90_000, type: "Bot" };
  }

  /** http://127.0.0.1:PORT; the REST API is at `${url}/api/v3`. */
  get url(): string {
    return this.baseUrl;
  }
  get apiUrl(): string {
    return `${this.baseUrl}/api/v3`;
  }
  /** For Probot: GHE_HOST. */
  get host(): string {
    return new URL(this.baseUrl).host;
  }

  async start(): Promise<this> {
    this.gitRoot = await mkdtemp(join(tmpdir(), "af-github-"));
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise<void>((resolve) => this.server?.close(() => resolve()));
    }
    if (this.gitRoot) await rm(this.gitRoot, { recursive: true, force: true });
  }

  async addRepo(options: AddRepoOptions) {
    const defaultBranch = options.defaultBranch ?? "main";
    await createBareRepo(this.gitRoot, options.owner, options.name, options.files, defaultBranch);
    const repo = {
      id: options.id ?? this.state.id(),
      owner: options.owner,
      name: options.name,
      defaultBranch,
      installationId: options.installationId ?? 1,
      permissions: new Map(Object.entries(options.permissions ?? {})),
    };
    this.state.repos.push(repo);
    return repo;
  }

  /**
   * Deletes a repository as its owner would: gone with its issues, pull requests and comments, its id
   * never given again. Its name is free: addRepo may create another repository (another id, maybe in
   * another installation, another account's) under it.
   */
  async deleteRepo(owner: string, name: string): Promise<void> {
    const { state } = this;
    const here = (x: { owner: string; repo: string }) => x.owner === owner && x.repo === name;
    const drop = <T>(list: T[], gone: (item: T) => boolean) => {
      for (let i = list.length - 1; i >= 0; i--) if (gone(list[i] as T)) list.splice(i, 1);
    };
    drop(state.repos, (r) => r.owner === owner && r.name === name);
    drop(state.issues, here);
    drop(state.pulls, here);
    drop(state.comments, here);
    for (const list of [this.ci.checkRuns, this.ci.checkSuites, this.ci.statuses, this.ci.workflowRuns])
      drop(list as { owner: string; repo: string }[], here);
    drop(this.ci.jobs, here);
    await rm(this.repoDir(owner, name), { recursive: true, force: true });
  }

  addIssue(
    owner: string,
    repo: string,
    issue: { title: string; body?: string; labels?: string[]; user?: string },
  ): StandInIssue {
    const created: StandInIssue = {
      owner,
      repo,
      number: this.state.nextNumber(owner, repo),
      title: issue.title,
      body: issue.body ?? "",
      state: "open",
      labels: issue.labels ?? [],
      user: { login: issue.user ?? "reporter", id: 555, type: "User" },
    };
    this.state.issues.push(created);
    return created;
  }

  /**
   * A pull request that exists already, as if opened on GitHub: by default the app's draft into
   * `main`, titled "Fix"; `pull` names the head branch and anything else that differs.
   */
  addPull(
    owner: string,
    repo: string,
    pull: Partial<Omit<StandInPull, "owner" | "repo" | "number">> & { head: string },
  ): StandInPull {
    const created: StandInPull = {
      ...{ owner, repo, number: this.state.nextNumber(owner, repo), title: "Fix", body: "", base: "main" },
      ...{ draft: true, state: "open" as const, user: this.bot, reviewRequests: [] },
      ...pull,
    };
    this.state.pulls.push(created);
    return created;
  }

  /** Mints an installation token as the app would (for tests that act as the worker). */
  mintToken(installationId = 1): string {
    return issueToken(this.state, installationId, this.tokenTtlMs).token;
  }

  /**
   * What installation `installationId` was granted, e.g. `{ contents: "write", checks: "write",
   * actions: "read", metadata: "read" }`: every token of it is held to these from now on (403
   * "Resource not accessible by integration" past them). Without it, what app.yml asks for.
   */
  setInstallationPermissions(installationId: number, permissions: Record<string, "read" | "write">): void {
    this.state.installationPermissions.set(installationId, { metadata: "read", ...permissions });
  }

  /** Makes every token issued so far expired, as if an hour had passed. */
  expireAllTokens(): void {
    for (const token of this.state.tokens.values()) token.expiresAt = Date.now() - 1;
  }

  /**
   * The next `times` requests matching `method` and `path` answer `status` (e.g. 500, 502), REST or git
   * (`/OWNER/REPO.git/...`), with the body GitHub's servers send (`Server Error`).
   */
  failNext(method: string, path: RegExp, status: number, times = 1, scope: FaultScope = {}): void {
    this.faults.push({ method, path, status, remaining: times, body: { message: "Server Error" }, ...scope });
  }

  /** The next `times` requests matching `method` and `path` hit a secondary rate limit, as GitHub answers it. */
  rateLimitNext(
    method: string,
    path: RegExp,
    options: { status?: 403 | 429; retryAfterSeconds?: number; times?: number } & FaultScope = {},
  ): void {
    const answer = secondaryRateLimit(options.status ?? 403, options.retryAfterSeconds);
    const scope = options.installationId === undefined ? {} : { installationId: options.installationId };
    this.faults.push({ method, path, ...answer, remaining: options.times ?? 1, ...scope });
  }

  /**
   * Every request matching `method` and `path` answers `status` with GitHub's `body` from now on, e.g.
   * 403 `Resource not accessible by integration` on every edit of a comment.
   */
  failAlways(method: string, path: RegExp, status: number, body: unknown): void {
    this.faults.push({ method, path, status, remaining: Number.POSITIVE_INFINITY, body });
  }

  /**
   * The answer to the next request matching `method` and `path` is held back once GitHub has acted on
   * it (a slow way back to the client): `arrived` resolves when it has, `release` sends the answer. What
   * the request did (a check run created) is there meanwhile, as on GitHub.
   */
  holdAnswer(method: string, path: RegExp): { arrived: Promise<void>; release(): void } {
    let acted = () => {};
    const arrived = new Promise<void>((resolve) => {
      acted = resolve;
    });
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.heldAnswers.push({ method, path, acted, released });
    return { arrived, release };
  }

  /** Branch name -> sha of a repository, as pushed so far. */
  async branches(owner: string, repo: string): Promise<Record<string, string>> {
    const refs = await listRefs(join(this.gitRoot, owner, `${repo}.git`));
    return Object.fromEntries(
      Object.entries(refs)
        .filter(([ref]) => ref.startsWith("refs/heads/"))
        .map(([ref, sha]) => [ref.slice("refs/heads/".length), sha]),
    );
  }

  /**
   * Someone's commit of `files` (path -> text; null deletes) on `branch` (created from `from`, the
   * default branch unless told, when it does not exist), authored by GitHub user `author` under their
   * noreply address: a person's commit on the app's branch, or the base branch moving on. Not a push
   * of the app's: `pushes` does not record it. Returns the commit's sha.
   */
  async commitAs(
    author: string,
    target: { owner: string; repo: string; branch: string; from?: string },
    files: Record<string, string | null>,
    message = `Change by ${author}`,
  ): Promise<string> {
    const { owner, repo, branch } = target;
    const stored = this.state.repo(owner, repo);
    if (!stored) throw new Error(`the stand-in has no repository ${owner}/${repo}`);
    const branches = await this.branches(owner, repo);
    const parent = branches[branch] ?? branches[target.from ?? stored.defaultBranch];
    if (!parent) throw new Error(`${owner}/${repo} has no branch ${target.from ?? stored.defaultBranch}`);
    // The address GitHub links to the user (same id as GET /users/{login} answers).
    const id = author === this.bot.login ? this.bot.id : 100_000 + author.length;
    const email = `${id}+${author}@users.noreply.${new URL(this.baseUrl).hostname}`;
    const sha = await commitOnBranch(this.repoDir(owner, repo), branch, parent, files, message, {
      name: author,
      email,
    });
    // GitHub recomputes the mergeability of the open pull requests into or from a branch that moved, in
    // the background: the next read of each answers `mergeable: null` until it has.
    for (const pull of this.state.pulls)
      if (
        pull.owner === owner &&
        pull.repo === repo &&
        pull.state === "open" &&
        (pull.base === branch || pull.head === branch)
      )
        pull.mergeabilityPending = Math.max(pull.mergeabilityPending ?? 0, 1);
    return sha;
  }

  /** Pushes to the repository are refused by `rules` as GitHub's git server refuses them. */
  refusePushes(owner: string, repo: string, rules: PushRule[]): Promise<void> {
    return installPushRules(this.repoDir(owner, repo), rules, `${this.baseUrl}/${owner}/${repo}/rules`);
  }

  /** Path of a bare repository (to inspect commits with git). */
  repoDir(owner: string, repo: string): string {
    return join(this.gitRoot, owner, `${repo}.git`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (await this.injectedFault(req, res)) return;
    const handledGit = handleGitRequest(
      {
        root: this.gitRoot,
        pushes: this.pushes,
        freshTokens: this.freshTokens,
        pushFaults: this.pushFaults,
        checkToken: (token, owner, name, push) => this.gitTokenVerdict(token, owner, name, push),
      },
      req,
      res,
    );
    if (handledGit) return;
    const url = new URL(req.url ?? "/", this.baseUrl);
    if (this.oauth.handle(req, res, url, () => readBody(req))) return;
    const path = url.pathname.replace(/^\/api\/v3/, "");
    const method = req.method ?? "GET";
    const token = bearerToken(req.headers.authorization);
    const send = (
      status: number,
      body?: unknown,
      actor = "anonymous",
      raw?: Buffer,
      headers: Record<string, string> = {},
      text?: string,
    ) => {
      const used = actor.startsWith("installation") && token ? { token } : {};
      const answeredAt = performance.timeOrigin + performance.now();
      this.state.requests.push({ method, path, status, actor, ...used, answeredAt });
      if (raw) res.writeHead(status, { ...headers, "content-type": "application/vnd.github.raw" }).end(raw);
      else if (text !== undefined)
        res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8" }).end(text);
      else if (body === undefined) res.writeHead(status, headers).end();
      else
        res
          .writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8" })
          .end(JSON.stringify(body));
    };
    if (token?.startsWith("ghu_")) {
      const answer = userTokenAnswer(this.state, this.oauth, token, method, path, this.baseUrl);
      return send(answer.status, answer.body, answer.actor);
    }
    const route = routes.find((r) => r.method === method && r.pattern.test(path));
    if (!route) return send(404, { message: `Not Found: the stand-in has no ${method} ${path}` });
    const actor = this.authenticate(req.headers.authorization, route.auth);
    if ("error" in actor) return send(401, { message: actor.error });
    let body: Record<string, unknown> = {};
    const text = await readBody(req);
    if (text) {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return send(400, { message: "Problems parsing JSON" });
      }
    }
    const ctx: RouteContext = {
      state: this.state,
      ci: this.ci,
      base: this.baseUrl,
      gitRoot: this.gitRoot,
      appId: this.appId,
      appSlug: this.appSlug,
      bot: this.bot,
      tokenTtlMs: this.tokenTtlMs,
      issueToken: (id) => issueToken(this.state, id, this.tokenTtlMs),
      actor,
      ...(token ? { token } : {}),
      params: (route.pattern.exec(path) ?? []).slice(1),
      query: url.searchParams,
      body,
      accept: String(req.headers.accept ?? ""),
    };
    const label = actor.kind === "installation" ? `installation:${actor.installationId}` : actor.kind;
    // A token minted for other repositories or fewer permissions is answered as GitHub answers it.
    const outOfScope =
      actor.kind === "installation" && token ? scopeVerdict(this.state, token, method, path) : null;
    if (outOfScope) return send(outOfScope.status, outOfScope.body, label);
    try {
      const result = await route.handler(ctx);
      const held = this.heldAnswers.findIndex((h) => h.method === method && h.path.test(path));
      if (held >= 0) {
        const [hold] = this.heldAnswers.splice(held, 1);
        hold?.acted();
        await hold?.released;
      }
      send(result.status, result.body, label, result.raw, result.headers, result.text);
    } catch (error) {
      send(500, { message: `Stand-in error: ${error instanceof Error ? error.message : error}` }, label);
    }
  }

  /** Answers a request an injected fault matches (REST or git), recording it; whether one did. */
  private async injectedFault(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const method = req.method ?? "GET";
    const path = new URL(req.url ?? "/", "http://stand-in").pathname.replace(/^\/api\/v3/, "");
    const installation = this.requestInstallation(req.headers.authorization, path);
    const fault = this.faults.find(
      (f) =>
        f.method === method &&
        f.path.test(path) &&
        f.remaining > 0 &&
        (f.installationId === undefined || f.installationId === installation),
    );
    if (!fault) return false;
    fault.remaining--;
    // The request is read first, as a server does before it answers.
    await readBody(req).catch(() => "");
    const actor = installation === undefined ? "anonymous" : `installation:${installation}`;
    this.state.requests.push({ method, path, status: fault.status, actor, fault: true });
    res
      .writeHead(fault.status, { ...fault.headers, "content-type": "application/json; charset=utf-8" })
      .end(JSON.stringify(fault.body ?? { message: `Injected failure ${fault.status}` }));
    return true;
  }

  /** The installation a request acts for: its token's, or the one in an /app/installations/ID path. */
  private requestInstallation(header: string | undefined, path: string): number | undefined {
    const inPath = /^\/app\/installations\/(\d+)\//.exec(path);
    if (inPath) return Number(inPath[1]);
    const token = tokenFrom(header);
    return token ? this.state.tokens.get(token)?.installationId : undefined;
  }

  private authenticate(
    header: string | undefined,
    kind: "app" | "installation" | "any",
  ): Actor | { error: string } {
    const [scheme = "", value = ""] = (header ?? "").split(" ", 2);
    if (kind === "any") {
      if (!value) return { kind: "anonymous" };
      // A credential that is sent is still checked, as GitHub does.
      return this.authenticate(
        header,
        /^bearer$/i.test(scheme) && value.split(".").length === 3 ? "app" : "installation",
      );
    }
    if (!value) return { error: "Requires authentication" };
    if (kind === "app") {
      if (!/^bearer$/i.test(scheme)) return { error: "A JSON web token could not be decoded" };
      const problem = checkAppJwt(value, this.appId, this.keys.publicKeyPem);
      return problem ? { error: `A JSON web token could not be decoded: ${problem}` } : { kind: "app" };
    }
    const verdict = checkToken(this.state, value);
    if (!verdict.ok) return { error: `Bad credentials (token ${verdict.reason})` };
    return { kind: "installation", installationId: verdict.installationId };
  }

  private gitTokenVerdict(
    token: string,
    owner: string,
    name: string,
    push: boolean,
  ): "ok" | "expired" | "unknown" | "forbidden" | "not_found" {
    const verdict = checkToken(this.state, token);
    const repo = this.state.repo(owner, name);
    const result = !verdict.ok
      ? verdict.reason
      : repo && repo.installationId === verdict.installationId
        ? gitScopeVerdict(this.state, token, repo, push)
        : "forbidden";
    this.state.requests.push({
      method: push ? "GIT-PUSH" : "GIT-FETCH",
      path: `/${owner}/${name}.git`,
      status: result === "ok" ? 200 : result === "not_found" ? 404 : result === "forbidden" ? 403 : 401,
      actor: verdict.ok ? `installation:${verdict.installationId}` : "anonymous",
      token,
    });
    return result;
  }
}

/** An answer held back after the request was acted on (GitHubServer.holdAnswer). */
interface HeldAnswer {
  method: string;
  path: RegExp;
  acted: () => void;
  released: Promise<void>;
}

/** The credential of an `Authorization: token X` / `Bearer X` header. */
function bearerToken(header: string | undefined): string | undefined {
  const [scheme = "", value = ""] = (header ?? "").split(" ", 2);
  return /^(token|bearer)$/i.test(scheme) && value ? value : undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export async function startGitHubServer(options: GitHubServerOptions = {}): Promise<GitHubServer> {
  return new GitHubServer(options).start();
}
