/**
 * GitHub Actions runs on the stand-in, as GitHub documents them (@octokit/openapi:
 * actions/list-workflow-runs-for-repo, actions/get-workflow-run, actions/list-jobs-for-workflow-run,
 * actions/get-job-for-workflow-run, actions/download-job-logs-for-workflow-run): a job's log is a 302
 * to a download URL that needs no credential and works for a minute, which the stand-in serves too,
 * plain text. A log someone deleted is 404; one past the repository's retention is 410 Gone (what
 * GitHub answers for expired logs; its OpenAPI description documents only the 302). They need the
 * `actions` permission (token-scopes.ts).
 */
import { randomBytes } from "node:crypto";
import { openPullHeads, type RouteHelpers } from "./check-routes.js";
import { jobJson, workflowRunJson } from "./ci-render.js";
import type { StandInWorkflowRun } from "./ci-state.js";
import { readCommit } from "./git-history.js";
import { paged } from "./history-routes.js";
import type { Route, RouteContext } from "./routes.js";
import type { StandInRepo } from "./state.js";

const R = "/repos/([^/]+)/([^/]+)";
/** How long a log's download URL works: "The URL expires after 1 minute." */
const LOG_URL_TTL_MS = 60_000;
const LOG_PATH = "/_stand-in/actions-logs/";

export function actionsRoutes({ withRepo, notFound }: RouteHelpers): Route[] {
  const runJson = async (ctx: RouteContext, repo: StandInRepo, run: StandInWorkflowRun) =>
    workflowRunJson(
      ctx.base,
      repo,
      run,
      await readCommit(ctx.ci.repoDir(repo.owner, repo.name), run.headSha),
      await openPullHeads(ctx, repo),
    );
  const runOf = (ctx: RouteContext, repo: StandInRepo) =>
    ctx.ci.workflowRuns.find(
      (r) => r.id === Number(ctx.params[2]) && r.owner === repo.owner && r.repo === repo.name,
    );
  const jobOf = (ctx: RouteContext, repo: StandInRepo) =>
    ctx.ci.jobs.find((j) => j.id === Number(ctx.params[2]) && j.owner === repo.owner && j.repo === repo.name);
  return [
    {
      method: "GET",
      pattern: new RegExp(`^${R}/actions/runs$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const q = (name: string) => ctx.query.get(name);
        const runs = ctx.ci.workflowRuns
          .filter(
            (r) =>
              r.owner === repo.owner &&
              r.repo === repo.name &&
              (!q("branch") || r.headBranch === q("branch")) &&
              (!q("head_sha") || r.headSha === q("head_sha")) &&
              (!q("event") || r.event === q("event")) &&
              // `status` takes a status or a conclusion.
              (!q("status") || r.status === q("status") || r.conclusion === q("status")),
          )
          .reverse();
        const all = [];
        for (const run of runs) all.push(await runJson(ctx, repo, run));
        const page = paged(ctx, `/repos/${repo.owner}/${repo.name}/actions/runs`, all);
        return { ...page, body: { total_count: all.length, workflow_runs: page.body } };
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/actions/runs/(\\d+)$`),
      auth: "installation",
      handler: withRepo(async (ctx, repo) => {
        const run = runOf(ctx, repo);
        return run ? { status: 200, body: await runJson(ctx, repo, run) } : notFound();
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/actions/runs/(\\d+)/jobs$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const run = runOf(ctx, repo);
        if (!run) return notFound();
        const jobs = ctx.ci.jobs
          .filter((j) => j.runId === run.id)
          .map((j) => jobJson(ctx.base, repo, run, j));
        const page = paged(ctx, `/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}/jobs`, jobs);
        return { ...page, body: { total_count: jobs.length, jobs: page.body } };
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/actions/jobs/(\\d+)$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const job = jobOf(ctx, repo);
        const run = job && ctx.ci.workflowRuns.find((r) => r.id === job.runId);
        return job && run ? { status: 200, body: jobJson(ctx.base, repo, run, job) } : notFound();
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/actions/jobs/(\\d+)/logs$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const job = jobOf(ctx, repo);
        if (!job || job.logs === "deleted") return notFound();
        if (job.logs === "expired")
          return {
            status: 410,
            body: { message: "Gone", documentation_url: "https://docs.github.com/rest", status: "410" },
          };
        const key = randomBytes(16).toString("hex");
        ctx.ci.logLinks.set(key, { jobId: job.id, expiresAt: Date.now() + LOG_URL_TTL_MS });
        return { status: 302, headers: { location: `${ctx.base}${LOG_PATH}${job.id}?sig=${key}` } };
      }),
    },
    {
      // The download URL of a log: no credential, a signature that works for a minute.
      method: "GET",
      pattern: new RegExp(`^${LOG_PATH}(\\d+)$`),
      auth: "any",
      handler: (ctx) => {
        const link = ctx.ci.logLinks.get(ctx.query.get("sig") ?? "");
        const job = ctx.ci.jobs.find((j) => j.id === Number(ctx.params[0]));
        if (!link || !job || link.jobId !== job.id || link.expiresAt < Date.now())
          return { status: 403, text: "AuthenticationFailed: the signature is not valid or has expired\n" };
        return { status: 200, text: job.log };
      },
    },
  ];
}
