/** The REST endpoints the app and the worker use, answered from StandInState like GitHub would. */
import { join } from "node:path";
import { listRefs } from "../git-server.js";
import { actionsRoutes } from "./actions-routes.js";
import { checkRoutes } from "./check-routes.js";
import type { CiState } from "./ci-state.js";
import { compareRoutes, mergeability } from "./compare-routes.js";
import { contentsAt } from "./contents.js";
import { paged, pullFilesJson, sortPulls } from "./history-routes.js";
import { commentJson, issueJson, pullJson, repoJson, userJson } from "./render.js";
import { reviewRoutes } from "./review-routes.js";
import type { StandInRepo, StandInState, StandInUser } from "./state.js";
import { installationPermissions, tokenRoutes } from "./token-scopes.js";
import { treeRoutes } from "./trees.js";

export type Actor =
  | { kind: "app" }
  | { kind: "installation"; installationId: number }
  | { kind: "anonymous" };

export interface RouteContext {
  state: StandInState;
  /** Check runs and suites, statuses, workflow runs and jobs (github/ci-state.ts). */
  ci: CiState;
  base: string;
  gitRoot: string;
  appId: number;
  appSlug: string;
  bot: StandInUser;
  tokenTtlMs: number;
  issueToken(installationId: number): { token: string; expires_at: string };
  actor: Actor;
  /** The installation token of the request, when one was sent. */
  token?: string;
  params: string[];
  query: URLSearchParams;
  body: Record<string, unknown>;
  accept: string;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  raw?: Buffer;
  /** A plain-text answer (a job's log). */
  text?: string;
  /** Headers GitHub sends with the answer (e.g. a list's Link). */
  headers?: Record<string, string>;
}

export type Handler = (ctx: RouteContext) => Promise<RouteResult> | RouteResult;
export interface Route {
  method: string;
  pattern: RegExp;
  /** Who may call it: the app's JWT, an installation token, or anyone (public endpoints). */
  auth: "app" | "installation" | "any";
  handler: Handler;
}

const notFound = (what = "Not Found"): RouteResult => ({ status: 404, body: { message: what } });
const invalid = (message: string): RouteResult => ({
  status: 422,
  body: { message: "Validation Failed", errors: [{ message }] },
});
const R = "/repos/([^/]+)/([^/]+)";

/**
 * Draft pull requests exist in public repositories of every plan and in private ones on Team and
 * Enterprise; elsewhere GitHub answers 422 with this message (the stand-in's repositories are private).
 */
function draftRefused(repo: StandInRepo, draft: unknown): RouteResult | null {
  if (draft !== true || (repo.plan !== "free" && repo.plan !== "pro")) return null;
  return {
    status: 422,
    body: {
      message: "Draft pull requests are not supported in this repository.",
      documentation_url: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
      status: "422",
    },
  };
}

/** GitHub's body limit, 65,536 characters counted as code points (an emoji is one). */
function tooLong(body: string): boolean {
  return body.length > 65_536 && [...body].length > 65_536;
}

function repoOf(ctx: RouteContext): StandInRepo | RouteResult {
  const [owner = "", name = ""] = ctx.params;
  const repo = ctx.state.repo(owner, name);
  if (!repo) return notFound();
  if (ctx.actor.kind === "installation" && ctx.actor.installationId !== repo.installationId) {
    return {
      status: 404,
      body: { message: "Not Found (the token's installation cannot see this repository)" },
    };
  }
  return repo;
}

function withRepo(
  handler: (ctx: RouteContext, repo: StandInRepo) => Promise<RouteResult> | RouteResult,
): Handler {
  return (ctx) => {
    const repo = repoOf(ctx);
    return "status" in repo ? repo : handler(ctx, repo);
  };
}

const now = () => new Date().toISOString();

async function headSha(ctx: RouteContext, repo: StandInRepo, branch: string): Promise<string | undefined> {
  const refs = await listRefs(join(ctx.gitRoot, repo.owner, `${repo.name}.git`));
  return refs[`refs/heads/${branch}`];
}

export const routes: Route[] = [
  {
    method: "GET",
    pattern: /^\/app$/,
    auth: "app",
    handler: (ctx) => ({ status: 200, body: { id: ctx.appId, slug: ctx.appSlug, name: ctx.appSlug } }),
  },
  ...tokenRoutes(),
  {
    method: "GET",
    pattern: /^\/app\/installations\/(\d+)$/,
    auth: "app",
    handler: (ctx) => {
      const repo = ctx.state.repos.find((r) => r.installationId === Number(ctx.params[0]));
      if (!repo) return notFound();
      const permissions = installationPermissions(ctx.state, repo.installationId);
      return { status: 200, body: { id: repo.installationId, account: { login: repo.owner }, permissions } };
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${R}/installation$`),
    auth: "app",
    handler: withRepo((_ctx, repo) => ({
      status: 200,
      body: { id: repo.installationId, account: { login: repo.owner } },
    })),
  },
  {
    method: "GET",
    pattern: /^\/installation\/repositories$/,
    auth: "installation",
    handler: (ctx) => {
      const id = ctx.actor.kind === "installation" ? ctx.actor.installationId : -1;
      const repos = ctx.state.repos.filter((r) => r.installationId === id).map((r) => repoJson(ctx.base, r));
      return { status: 200, body: { total_count: repos.length, repositories: repos } };
    },
  },
  {
    method: "GET",
    pattern: /^\/users\/([^/]+)$/,
    auth: "any",
    handler: (ctx) => {
      const login = decodeURIComponent(ctx.params[0] ?? "");
      if (login === ctx.bot.login) return { status: 200, body: userJson(ctx.bot) };
      return {
        status: 200,
        body: { login, id: 100_000 + login.length, type: "User", node_id: `U_${login}` },
      };
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${R}$`),
    auth: "installation",
    handler: withRepo((ctx, repo) => ({ status: 200, body: repoJson(ctx.base, repo) })),
  },
  {
    // The repository of an id, whatever it is named now: where GitHub's 301 for a renamed or transferred
    // repository points (Location: /repositories/{id}); the same answer as GET /repos/{owner}/{repo}.
    // A deleted repository's id is not found, even when another repository holds its name now.
    method: "GET",
    pattern: /^\/repositories\/(\d+)$/,
    auth: "installation",
    handler: (ctx) => {
      const repo = ctx.state.repos.find((r) => r.id === Number(ctx.params[0]));
      if (!repo || (ctx.actor.kind === "installation" && ctx.actor.installationId !== repo.installationId))
        return notFound();
      return { status: 200, body: repoJson(ctx.base, repo) };
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^${R}/contents(?:/(.*))?$`),
    auth: "installation",
    handler: withRepo(async (ctx, repo) => {
      const path = decodeURIComponent(ctx.params[2] ?? "");
      const ref = ctx.query.get("ref") ?? repo.defaultBranch;
      const bare = join(ctx.gitRoot, repo.owner, `${repo.name}.git`);
      const entry = await contentsAt(bare, ref, path);
      if (!entry) return notFound();
      if (Array.isArray(entry)) return { status: 200, body: entry };
      if (ctx.accept.includes(".raw") && entry.type === "file") {
        return { status: 200, raw: Buffer.from(entry.content, "base64") };
      }
      return { status: 200, body: entry };
    }),
  },
  {
    method: "GET",
    pattern: new RegExp(`^${R}/branches/([^/]+)$`),
    auth: "installation",
    handler: withRepo(async (ctx, repo) => {
      const branch = decodeURIComponent(ctx.params[2] ?? "");
      const sha = await headSha(ctx, repo, branch);
      return sha ? { status: 200, body: { name: branch, commit: { sha } } } : notFound("Branch not found");
    }),
  },
  {
    method: "GET",
    pattern: new RegExp(`^${R}/collaborators/([^/]+)/permission$`),
    auth: "installation",
    handler: withRepo((ctx, repo) => {
      const login = decodeURIComponent(ctx.params[2] ?? "");
      const role = ctx.state.permission(repo, login);
      // GitHub folds maintain into write and triage into read in `permission`; `role_name` keeps it.
      const permission = role === "maintain" ? "write" : role === "triage" ? "read" : role;
      return { status: 200, body: { permission, role_name: role, user: { login } } };
    }),
  },
  ...issueRoutes(),
  ...pullRoutes(),
  ...reviewRoutes({ withRepo, notFound, invalid }),
  ...treeRoutes({ withRepo, notFound }),
  ...checkRoutes({ withRepo, notFound }),
  ...actionsRoutes({ withRepo, notFound }),
  ...compareRoutes({ withRepo, notFound }),
];

function issueRoutes(): Route[] {
  const issueOf = (ctx: RouteContext, repo: StandInRepo) =>
    ctx.state.issue(repo.owner, repo.name, Number(ctx.params[2]));
  const commentOf = (ctx: RouteContext, repo: StandInRepo) =>
    ctx.state.comments.find(
      (c) => c.id === Number(ctx.params[2]) && c.owner === repo.owner && c.repo === repo.name,
    );
  const exists = (ctx: RouteContext, repo: StandInRepo) =>
    issueOf(ctx, repo) ?? ctx.state.pull(repo.owner, repo.name, Number(ctx.params[2]));
  return [
    {
      method: "GET",
      pattern: new RegExp(`^${R}/issues/comments/(\\d+)$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const comment = commentOf(ctx, repo);
        return comment ? { status: 200, body: commentJson(ctx.base, comment) } : notFound();
      }),
    },
    {
      method: "PATCH",
      pattern: new RegExp(`^${R}/issues/comments/(\\d+)$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const comment = commentOf(ctx, repo);
        if (!comment) return notFound();
        if (typeof ctx.body.body !== "string") return invalid("body is required");
        if (tooLong(ctx.body.body)) return invalid("Body is too long (maximum is 65536 characters)");
        if (comment.user.login !== ctx.bot.login)
          return { status: 403, body: { message: "Must have admin rights to edit another user's comment" } };
        comment.body = ctx.body.body;
        comment.updatedAt = now();
        comment.history.push(comment.body);
        return { status: 200, body: commentJson(ctx.base, comment) };
      }),
    },
    {
      method: "DELETE",
      pattern: new RegExp(`^${R}/issues/comments/(\\d+)$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const comment = commentOf(ctx, repo);
        if (!comment) return notFound();
        ctx.state.comments.splice(ctx.state.comments.indexOf(comment), 1);
        return { status: 204 };
      }),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/issues/comments/(\\d+)/reactions$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const comment = commentOf(ctx, repo);
        if (!comment) return notFound();
        const reaction = {
          id: ctx.state.id(),
          owner: repo.owner,
          repo: repo.name,
          commentId: comment.id,
          content: String(ctx.body.content),
          user: ctx.bot,
        };
        ctx.state.reactions.push(reaction);
        return { status: 201, body: { id: reaction.id, content: reaction.content, user: userJson(ctx.bot) } };
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/issues/(\\d+)$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const issue = issueOf(ctx, repo);
        return issue ? { status: 200, body: issueJson(ctx.base, issue) } : notFound();
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/issues/(\\d+)/comments$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        if (!exists(ctx, repo)) return notFound();
        const list = ctx.state.commentsOn(repo.owner, repo.name, Number(ctx.params[2]));
        const perPage = Number(ctx.query.get("per_page") ?? 30);
        const page = Number(ctx.query.get("page") ?? 1);
        return {
          status: 200,
          body: list.slice((page - 1) * perPage, page * perPage).map((c) => commentJson(ctx.base, c)),
        };
      }),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/issues/(\\d+)/comments$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        if (!exists(ctx, repo)) return notFound();
        const body = ctx.body.body;
        if (typeof body !== "string" || body.length === 0) return invalid("body is required");
        if (tooLong(body)) return invalid("Body is too long (maximum is 65536 characters)");
        const at = now();
        const comment = {
          id: ctx.state.id(),
          owner: repo.owner,
          repo: repo.name,
          issueNumber: Number(ctx.params[2]),
          body,
          user: ctx.bot,
          createdAt: at,
          updatedAt: at,
          history: [body],
        };
        ctx.state.comments.push(comment);
        return { status: 201, body: commentJson(ctx.base, comment) };
      }),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/issues/(\\d+)/reactions$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        if (!exists(ctx, repo)) return notFound();
        const content = String(ctx.body.content);
        const issueNumber = Number(ctx.params[2]);
        const same = ctx.state.reactions.find(
          (r) =>
            r.owner === repo.owner &&
            r.repo === repo.name &&
            r.issueNumber === issueNumber &&
            r.content === content &&
            r.user.login === ctx.bot.login,
        );
        // GitHub answers 200 with the existing reaction when the same user reacts twice.
        if (same) return { status: 200, body: { id: same.id, content, user: userJson(ctx.bot) } };
        const reaction = {
          id: ctx.state.id(),
          owner: repo.owner,
          repo: repo.name,
          issueNumber,
          content,
          user: ctx.bot,
        };
        ctx.state.reactions.push(reaction);
        return { status: 201, body: { id: reaction.id, content, user: userJson(ctx.bot) } };
      }),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/issues/(\\d+)/labels$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const issue = issueOf(ctx, repo);
        if (!issue) return notFound();
        const labels = (ctx.body.labels as string[] | undefined) ?? [];
        for (const label of labels) if (!issue.labels.includes(label)) issue.labels.push(label);
        return { status: 200, body: issue.labels.map((name) => ({ name })) };
      }),
    },
    {
      method: "DELETE",
      pattern: new RegExp(`^${R}/issues/(\\d+)/labels/([^/]+)$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const issue = issueOf(ctx, repo);
        const name = decodeURIComponent(ctx.params[3] ?? "");
        if (!issue?.labels.includes(name)) return notFound("Label does not exist");
        issue.labels.splice(issue.labels.indexOf(name), 1);
        return { status: 200, body: issue.labels.map((n) => ({ name: n })) };
      }),
    },
  ];
}

function pullRoutes(): Route[] {
  const pullOf = (ctx: RouteContext, repo: StandInRepo) =>
    ctx.state.pull(repo.owner, repo.name, Number(ctx.params[2]));
  const branchOf = (head: string) => (head.includes(":") ? head.slice(head.indexOf(":") + 1) : head);
  return [
    {
      method: "GET",
      pattern: new RegExp(`^${R}/pulls$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const state = ctx.query.get("state") ?? "open";
        const head = ctx.query.get("head");
        // `base`: only pull requests into that branch (GitHub's "Filter pulls by base branch name").
        const base = ctx.query.get("base");
        const list = ctx.state.pulls.filter(
          (p) =>
            p.owner === repo.owner &&
            p.repo === repo.name &&
            (state === "all" || p.state === state) &&
            (!head || p.head === branchOf(head)) &&
            (!base || p.base === base),
        );
        const body = [];
        for (const p of sortPulls(list, ctx.query.get("sort"), ctx.query.get("direction")))
          body.push(pullJson(ctx.base, p, (await headSha(ctx, repo, p.head)) ?? ""));
        return paged(ctx, `/repos/${repo.owner}/${repo.name}/pulls`, body);
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/pulls/(\\d+)/files$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const pull = pullOf(ctx, repo);
        if (!pull) return notFound();
        const path = `/repos/${repo.owner}/${repo.name}/pulls/${pull.number}/files`;
        return paged(ctx, path, await pullFilesJson(ctx, repo, pull));
      }),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/pulls$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const { title, body, head, base, draft } = ctx.body as Record<string, string | boolean | undefined>;
        if (typeof title !== "string" || typeof head !== "string" || typeof base !== "string")
          return invalid("title, head and base are required");
        if (typeof body === "string" && tooLong(body))
          return invalid("Body is too long (maximum is 65536 characters)");
        const refused = draftRefused(repo, draft);
        if (refused) return refused;
        const branch = branchOf(head);
        const sha = await headSha(ctx, repo, branch);
        if (!sha) return invalid(`head: branch ${branch} does not exist`);
        if (!(await headSha(ctx, repo, base))) return invalid(`base: branch ${base} does not exist`);
        if (
          ctx.state.pulls.some(
            (p) => p.owner === repo.owner && p.repo === repo.name && p.head === branch && p.state === "open",
          )
        ) {
          return invalid(`A pull request already exists for ${repo.owner}:${branch}.`);
        }
        const pull = {
          owner: repo.owner,
          repo: repo.name,
          number: ctx.state.nextNumber(repo.owner, repo.name),
          title,
          body: typeof body === "string" ? body : "",
          head: branch,
          base,
          draft: draft === true,
          state: "open" as const,
          user: ctx.bot,
          reviewRequests: [],
        };
        ctx.state.pulls.push(pull);
        return { status: 201, body: pullJson(ctx.base, pull, sha) };
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/pulls/(\\d+)$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const pull = pullOf(ctx, repo);
        if (!pull) return notFound();
        // Only a single pull request's answer carries its mergeability, as on GitHub.
        const body = pullJson(ctx.base, pull, (await headSha(ctx, repo, pull.head)) ?? "");
        return { status: 200, body: { ...body, ...(await mergeability(ctx, repo, pull)) } };
      }),
    },
    {
      method: "PATCH",
      pattern: new RegExp(`^${R}/pulls/(\\d+)$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const pull = pullOf(ctx, repo);
        if (!pull) return notFound();
        const { title, body, state } = ctx.body;
        if (typeof title === "string") pull.title = title;
        if (typeof body === "string") {
          if (tooLong(body)) return invalid("Body is too long (maximum is 65536 characters)");
          pull.body = body;
        }
        if (state === "open" || state === "closed") pull.state = state;
        return { status: 200, body: pullJson(ctx.base, pull, (await headSha(ctx, repo, pull.head)) ?? "") };
      }),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/pulls/(\\d+)/requested_reviewers$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const pull = pullOf(ctx, repo);
        if (!pull) return notFound();
        const reviewers = (ctx.body.reviewers as string[] | undefined) ?? [];
        for (const login of reviewers) {
          if (ctx.state.permission(repo, login) === "none")
            return invalid("Reviews may only be requested from collaborators.");
          if (login === pull.user.login)
            return invalid("Review cannot be requested from pull request author.");
        }
        const teams = (ctx.body.team_reviewers as string[] | undefined) ?? [];
        for (const slug of teams)
          if (ctx.state.permission(repo, `${repo.owner}/${slug}`) === "none")
            return invalid(
              `Reviews may only be requested from collaborators. One or more of the teams you specified is not a collaborator of the ${repo.owner}/${repo.name} repository.`,
            );
        for (const login of reviewers)
          if (!pull.reviewRequests.includes(login)) pull.reviewRequests.push(login);
        pull.teamReviewRequests = [...new Set([...(pull.teamReviewRequests ?? []), ...teams])];
        return { status: 201, body: pullJson(ctx.base, pull, (await headSha(ctx, repo, pull.head)) ?? "") };
      }),
    },
  ];
}
