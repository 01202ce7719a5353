/**
 * Checks and commit statuses on the stand-in, as GitHub documents them (@octokit/openapi: checks/create,
 * checks/update, checks/get, checks/list-annotations, checks/list-for-ref, checks/list-suites-for-ref,
 * checks/get-suite, repos/create-commit-status, repos/list-commit-statuses-for-ref,
 * repos/get-combined-status-for-ref) with GitHub's refusals: 422 for an unknown commit, for more than 50
 * annotations in one request ("No more than 50 items are allowed; N were supplied.") and for a completed
 * run without a conclusion; 403 when an app updates another app's check run. The permissions they need
 * (checks, statuses) are enforced for every token by token-scopes.ts.
 */
import { listRefs } from "../git-server.js";
import {
  annotationJson,
  checkRunJson,
  checkSuiteJson,
  combinedStatusJson,
  type PullHead,
  statusJson,
} from "./ci-render.js";
import type {
  CheckConclusion,
  CheckStatus,
  StandInAnnotation,
  StandInApp,
  StandInCheckRun,
} from "./ci-state.js";
import { readCommit } from "./git-history.js";
import { paged } from "./history-routes.js";
import type { Route, RouteContext, RouteResult } from "./routes.js";
import type { StandInRepo } from "./state.js";

export interface RouteHelpers {
  withRepo(
    handler: (ctx: RouteContext, repo: StandInRepo) => Promise<RouteResult> | RouteResult,
  ): Route["handler"];
  notFound(what?: string): RouteResult;
}

const R = "/repos/([^/]+)/([^/]+)";
const STATUSES: CheckStatus[] = ["queued", "in_progress", "completed"];
const CONCLUSIONS: CheckConclusion[] = [
  "success",
  "failure",
  "neutral",
  "cancelled",
  "skipped",
  "timed_out",
  "action_required",
];
const LEVELS = ["notice", "warning", "failure"];
const DOCS = "https://docs.github.com/rest/checks/runs";

/** GitHub's 422 for a check run request its schema refuses. */
function invalidRequest(detail: string, operation: string): RouteResult {
  return {
    status: 422,
    body: {
      message: `Invalid request.\n\n${detail}`,
      documentation_url: `${DOCS}#${operation}`,
      status: "422",
    },
  };
}

const noCommit = (sha: string): RouteResult => ({
  status: 422,
  body: {
    message: `No commit found for SHA: ${sha}`,
    documentation_url: "https://docs.github.com/rest",
    status: "422",
  },
});

/** The app a request acts for: the stand-in's app, for its installation tokens. */
const callerApp = (ctx: RouteContext): StandInApp => ({
  id: ctx.appId,
  slug: ctx.appSlug,
  name: ctx.appSlug,
});

/** The open pull requests of the repository with their head and base commits now (for `pull_requests`). */
export async function openPullHeads(ctx: RouteContext, repo: StandInRepo): Promise<PullHead[]> {
  const refs = await listRefs(ctx.ci.repoDir(repo.owner, repo.name));
  return ctx.state.pulls
    .filter((p) => p.owner === repo.owner && p.repo === repo.name && p.state === "open")
    .map((p) => ({
      number: p.number,
      head: p.head,
      headSha: refs[`refs/heads/${p.head}`] ?? "",
      base: p.base,
      baseSha: refs[`refs/heads/${p.base}`] ?? "",
    }));
}

/** Annotations of a request, checked as GitHub checks them; a refusal when they are not valid. */
function annotationsOf(body: Record<string, unknown>, operation: string): StandInAnnotation[] | RouteResult {
  const output = body.output as { annotations?: unknown } | undefined;
  const list = output?.annotations;
  if (list === undefined) return [];
  if (!Array.isArray(list)) return invalidRequest('"annotations" is not an array.', operation);
  if (list.length > 50)
    return invalidRequest(`No more than 50 items are allowed; ${list.length} were supplied.`, operation);
  for (const a of list as Record<string, unknown>[]) {
    for (const field of ["path", "start_line", "end_line", "annotation_level", "message"])
      if (a[field] === undefined) return invalidRequest(`"${field}" wasn't supplied.`, operation);
    if (!LEVELS.includes(String(a.annotation_level)))
      return invalidRequest(`"annotation_level" is not one of ${LEVELS.join(", ")}.`, operation);
  }
  return list as StandInAnnotation[];
}

/** Applies the fields of a create or update request to a check run; a refusal when they are not valid. */
function applyFields(
  run: StandInCheckRun,
  body: Record<string, unknown>,
  operation: string,
): RouteResult | null {
  const { status, conclusion, completed_at: completedAt, details_url: detailsUrl, external_id } = body;
  if (status !== undefined && !STATUSES.includes(status as CheckStatus))
    return invalidRequest(`"status" is not one of ${STATUSES.join(", ")}.`, operation);
  if (conclusion !== undefined && conclusion !== null && !CONCLUSIONS.includes(conclusion as CheckConclusion))
    return invalidRequest(`"conclusion" is not one of ${CONCLUSIONS.join(", ")}.`, operation);
  // A conclusion completes the run; a completed run (or one given completed_at) needs a conclusion.
  const completes = status === "completed" || completedAt !== undefined;
  if (completes && (conclusion === undefined || conclusion === null) && run.conclusion === null)
    return invalidRequest('"conclusion" is required when "status" is "completed".', operation);
  const output = body.output as { title?: unknown; summary?: unknown; text?: unknown } | undefined;
  if (output !== undefined && (typeof output.title !== "string" || typeof output.summary !== "string"))
    return invalidRequest('"output" needs "title" and "summary".', operation);
  const annotations = annotationsOf(body, operation);
  if (!Array.isArray(annotations)) return annotations;
  if (typeof body.name === "string") run.name = body.name;
  if (typeof detailsUrl === "string") run.detailsUrl = detailsUrl;
  if (typeof external_id === "string") run.externalId = external_id;
  if (status !== undefined) run.status = status as CheckStatus;
  if (typeof conclusion === "string") {
    run.conclusion = conclusion as CheckConclusion;
    run.status = "completed";
  }
  if (run.status === "completed")
    run.completedAt =
      typeof completedAt === "string" ? completedAt : (run.completedAt ?? new Date().toISOString());
  if (output !== undefined)
    run.output = {
      title: output.title as string,
      summary: output.summary as string,
      text: typeof output.text === "string" ? output.text : run.output.text,
    };
  // Each request's annotations are added to the run's, as GitHub documents (batches of 50).
  run.annotations.push(...annotations);
  return null;
}

export function checkRoutes({ withRepo, notFound }: RouteHelpers): Route[] {
  const runOf = (ctx: RouteContext, repo: StandInRepo) =>
    ctx.ci.checkRuns.find(
      (r) => r.id === Number(ctx.params[2]) && r.owner === repo.owner && r.repo === repo.name,
    );
  const runAnswer = async (ctx: RouteContext, repo: StandInRepo, run: StandInCheckRun, status: number) => ({
    status,
    body: checkRunJson(ctx.base, repo, run, await openPullHeads(ctx, repo)),
  });
  /** The commit `ref` names, or GitHub's 422 when it names none. */
  const commitOf = async (ctx: RouteContext, repo: StandInRepo) => {
    const ref = decodeURIComponent(ctx.params[2] ?? "");
    return (await ctx.ci.resolve(repo.owner, repo.name, ref)) ?? noCommit(ref);
  };
  return [
    {
      method: "POST",
      pattern: new RegExp(`^${R}/check-runs$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const { name, head_sha: headSha } = ctx.body;
        if (typeof name !== "string" || name === "")
          return invalidRequest('"name" wasn\'t supplied.', "create-a-check-run");
        if (typeof headSha !== "string")
          return invalidRequest('"head_sha" wasn\'t supplied.', "create-a-check-run");
        const sha = await ctx.ci.resolve(repo.owner, repo.name, headSha);
        if (!sha?.startsWith(headSha.toLowerCase())) return noCommit(headSha);
        const app = callerApp(ctx);
        const at = new Date().toISOString();
        const run: StandInCheckRun = {
          id: ctx.state.id(),
          owner: repo.owner,
          repo: repo.name,
          headSha: sha,
          name,
          status: "queued",
          conclusion: null,
          startedAt: typeof ctx.body.started_at === "string" ? ctx.body.started_at : at,
          completedAt: null,
          output: { title: null, summary: null, text: null },
          annotations: [],
          detailsUrl: null,
          externalId: "",
          suiteId: 0,
          app,
        };
        const refused = applyFields(run, ctx.body, "create-a-check-run");
        if (refused) return refused;
        const branch = await ctx.ci.branchAt(repo.owner, repo.name, sha);
        run.suiteId = ctx.ci.suiteFor(repo.owner, repo.name, app, sha, branch).id;
        ctx.ci.checkRuns.push(run);
        return runAnswer(ctx, repo, run, 201);
      }),
    },
    {
      method: "PATCH",
      pattern: new RegExp(`^${R}/check-runs/(\\d+)$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const run = runOf(ctx, repo);
        if (!run) return notFound();
        if (run.app.id !== ctx.appId)
          return {
            status: 403,
            body: {
              message: `Invalid app_id \`${ctx.appId}\` - check run can only be modified by the GitHub App that created it.`,
              documentation_url: `${DOCS}#update-a-check-run`,
              status: "403",
            },
          };
        const refused = applyFields(run, ctx.body, "update-a-check-run");
        return refused ?? runAnswer(ctx, repo, run, 200);
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/check-runs/(\\d+)$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const run = runOf(ctx, repo);
        return run ? runAnswer(ctx, repo, run, 200) : notFound();
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/check-runs/(\\d+)/annotations$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const run = runOf(ctx, repo);
        if (!run) return notFound();
        const path = `/repos/${repo.owner}/${repo.name}/check-runs/${run.id}/annotations`;
        return paged(
          ctx,
          path,
          run.annotations.map((a) => annotationJson(ctx.base, run, a)),
        );
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/commits/([^/]+)/check-runs$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const sha = await commitOf(ctx, repo);
        if (typeof sha !== "string") return sha;
        const name = ctx.query.get("check_name");
        const status = ctx.query.get("status");
        const appId = ctx.query.get("app_id");
        let runs = ctx.ci.checkRuns.filter(
          (r) =>
            r.owner === repo.owner &&
            r.repo === repo.name &&
            r.headSha === sha &&
            (!name || r.name === name) &&
            (!status || r.status === status) &&
            (!appId || r.app.id === Number(appId)),
        );
        // filter=latest (the default): the most recent run of each name and app.
        if ((ctx.query.get("filter") ?? "latest") === "latest")
          runs = runs.filter(
            (r) => !runs.some((o) => o.id > r.id && o.name === r.name && o.app.id === r.app.id),
          );
        const pulls = await openPullHeads(ctx, repo);
        const all = [...runs].reverse().map((r) => checkRunJson(ctx.base, repo, r, pulls));
        const page = paged(ctx, `/repos/${repo.owner}/${repo.name}/commits/${sha}/check-runs`, all);
        return { ...page, body: { total_count: all.length, check_runs: page.body } };
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/commits/([^/]+)/check-suites$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const sha = await commitOf(ctx, repo);
        if (typeof sha !== "string") return sha;
        const appId = ctx.query.get("app_id");
        const name = ctx.query.get("check_name");
        const suites = ctx.ci.checkSuites.filter(
          (s) =>
            s.owner === repo.owner &&
            s.repo === repo.name &&
            s.headSha === sha &&
            (!appId || s.app.id === Number(appId)) &&
            (!name || ctx.ci.checkRuns.some((r) => r.suiteId === s.id && r.name === name)),
        );
        const pulls = await openPullHeads(ctx, repo);
        const head = await readCommit(ctx.ci.repoDir(repo.owner, repo.name), sha);
        const all = suites.map((s) => checkSuiteJson(ctx.base, repo, ctx.ci, s, head, pulls));
        const page = paged(ctx, `/repos/${repo.owner}/${repo.name}/commits/${sha}/check-suites`, all);
        return { ...page, body: { total_count: all.length, check_suites: page.body } };
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/check-suites/(\\d+)$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const suite = ctx.ci.checkSuites.find(
          (s) => s.id === Number(ctx.params[2]) && s.owner === repo.owner && s.repo === repo.name,
        );
        if (!suite) return notFound();
        const head = await readCommit(ctx.ci.repoDir(repo.owner, repo.name), suite.headSha);
        const pulls = await openPullHeads(ctx, repo);
        return { status: 200, body: checkSuiteJson(ctx.base, repo, ctx.ci, suite, head, pulls) };
      }),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/statuses/([0-9a-fA-F]+)$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const given = ctx.params[2] ?? "";
        const sha = await ctx.ci.resolve(repo.owner, repo.name, given);
        if (!sha?.startsWith(given.toLowerCase())) return noCommit(given);
        const { state, context, description, target_url: targetUrl } = ctx.body;
        if (!["error", "failure", "pending", "success"].includes(String(state)))
          return {
            status: 422,
            body: {
              message: "Validation Failed",
              errors: [
                {
                  resource: "Status",
                  code: "custom",
                  field: "state",
                  message: "state is not included in the list",
                },
              ],
              documentation_url: "https://docs.github.com/rest/commits/statuses#create-a-commit-status",
              status: "422",
            },
          };
        const at = new Date().toISOString();
        const status = {
          id: ctx.state.id(),
          owner: repo.owner,
          repo: repo.name,
          sha,
          state: state as "error" | "failure" | "pending" | "success",
          context: typeof context === "string" ? context : "default",
          description: typeof description === "string" ? description : null,
          targetUrl: typeof targetUrl === "string" ? targetUrl : null,
          creator: ctx.bot,
          createdAt: at,
          updatedAt: at,
        };
        ctx.ci.statuses.push(status);
        const body = statusJson(ctx.base, repo, status);
        return { status: 201, body, headers: { location: body.url } };
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/commits/([^/]+)/statuses$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const sha = await commitOf(ctx, repo);
        if (typeof sha !== "string") return sha;
        const list = statusesOf(ctx, repo, sha).map((s) => statusJson(ctx.base, repo, s));
        return paged(ctx, `/repos/${repo.owner}/${repo.name}/commits/${sha}/statuses`, list);
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/commits/([^/]+)/status$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const ref = decodeURIComponent(ctx.params[2] ?? "");
        const sha = await ctx.ci.resolve(repo.owner, repo.name, ref);
        // Documented: 404 for a ref that names no commit.
        if (!sha) return notFound(`No commit found for the ref ${ref}`);
        return { status: 200, body: combinedStatusJson(ctx.base, repo, sha, statusesOf(ctx, repo, sha)) };
      }),
    },
  ];
}

/** A commit's statuses, newest first (as GitHub lists them). */
function statusesOf(ctx: RouteContext, repo: StandInRepo, sha: string) {
  return ctx.ci.statuses
    .filter((s) => s.owner === repo.owner && s.repo === repo.name && s.sha === sha)
    .reverse();
}
