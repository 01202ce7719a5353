/**
 * Keeping a branch up with its base, on the stand-in as GitHub documents it (@octokit/openapi):
 * GET /repos/{owner}/{repo}/compare/{basehead} (ahead_by, behind_by, the commits with their authors,
 * the merge base, the files), POST /repos/{owner}/{repo}/merges (201 with the merge commit, 204 when
 * there is nothing to merge, 409 "Merge conflict", 404 "Base does not exist" / "Head does not exist"),
 * and a pull request's `mergeable` / `mergeable_state`. All computed by git on the bare repository.
 */

import type { RouteHelpers } from "./check-routes.js";
import { commitJson } from "./ci-render.js";
import { rollUp } from "./ci-state.js";
import {
  changesBetween,
  commitsBetween,
  mergeBase,
  mergeInto,
  mergeTree,
  readCommit,
} from "./git-history.js";
import type { Route, RouteContext, RouteResult } from "./routes.js";
import type { StandInPull, StandInRepo } from "./state.js";

const R = "/repos/([^/]+)/([^/]+)";

async function compare(ctx: RouteContext, repo: StandInRepo, helpers: RouteHelpers): Promise<RouteResult> {
  const basehead = decodeURIComponent(ctx.params[2] ?? "");
  const [baseRef, headRef] = basehead.includes("...") ? basehead.split("...") : basehead.split("..");
  if (!baseRef || !headRef) return helpers.notFound();
  // USER:BRANCH names a branch of a fork; the stand-in's forks are the repository itself.
  const strip = (ref: string) => ref.slice(ref.indexOf(":") + 1);
  const bare = ctx.ci.repoDir(repo.owner, repo.name);
  const base = await ctx.ci.resolve(repo.owner, repo.name, strip(baseRef));
  const head = await ctx.ci.resolve(repo.owner, repo.name, strip(headRef));
  if (!base || !head) return helpers.notFound();
  const mergeBaseSha = (await mergeBase(bare, base, head)) ?? base;
  const ahead = await commitsBetween(bare, base, head);
  const behindBy = (await commitsBetween(bare, head, base)).length;
  const status =
    ahead.length === 0 && behindBy === 0
      ? "identical"
      : behindBy === 0
        ? "ahead"
        : ahead.length === 0
          ? "behind"
          : "diverged";
  const api = `${ctx.base}/api/v3/repos/${repo.owner}/${repo.name}`;
  const html = `${ctx.base}/${repo.owner}/${repo.name}`;
  const files = (await changesBetween(bare, mergeBaseSha, head)).map((c) => ({
    sha: c.sha,
    filename: c.filename,
    ...(c.previousFilename ? { previous_filename: c.previousFilename } : {}),
    status: c.status,
    additions: c.additions,
    deletions: c.deletions,
    changes: c.additions + c.deletions,
    blob_url: `${html}/blob/${head}/${c.filename}`,
    raw_url: `${html}/raw/${head}/${c.filename}`,
    contents_url: `${api}/contents/${c.filename}?ref=${head}`,
  }));
  return {
    status: 200,
    body: {
      url: `${api}/compare/${basehead}`,
      html_url: `${html}/compare/${basehead}`,
      permalink_url: `${html}/compare/${repo.owner}:${base.slice(0, 7)}...${repo.owner}:${head.slice(0, 7)}`,
      diff_url: `${html}/compare/${basehead}.diff`,
      patch_url: `${html}/compare/${basehead}.patch`,
      base_commit: commitJson(ctx.base, repo, await readCommit(bare, base)),
      merge_base_commit: commitJson(ctx.base, repo, await readCommit(bare, mergeBaseSha)),
      status,
      ahead_by: ahead.length,
      behind_by: behindBy,
      total_commits: ahead.length,
      // GitHub lists at most 250 commits here, oldest first.
      commits: ahead.slice(0, 250).map((c) => commitJson(ctx.base, repo, c)),
      files,
    },
  };
}

async function merge(ctx: RouteContext, repo: StandInRepo): Promise<RouteResult> {
  const { base, head, commit_message: message } = ctx.body;
  if (typeof base !== "string" || typeof head !== "string")
    return {
      status: 422,
      body: {
        message: "Validation Failed",
        errors: [
          { resource: "Merge", code: "missing_field", field: typeof base === "string" ? "head" : "base" },
        ],
        documentation_url: "https://docs.github.com/rest/branches/branches#merge-a-branch",
        status: "422",
      },
    };
  const bare = ctx.ci.repoDir(repo.owner, repo.name);
  const baseSha = await ctx.ci.resolve(repo.owner, repo.name, `refs/heads/${base}`);
  if (!baseSha) return { status: 404, body: { message: "Base does not exist" } };
  const headSha = await ctx.ci.resolve(repo.owner, repo.name, head);
  if (!headSha) return { status: 404, body: { message: "Head does not exist" } };
  const author = {
    name: ctx.bot.login,
    email: `${ctx.bot.id}+${ctx.bot.login}@users.noreply.${new URL(ctx.base).hostname}`,
  };
  const merged = await mergeInto(
    bare,
    base,
    baseSha,
    headSha,
    typeof message === "string" ? message : `Merge ${head} into ${base}`,
    author,
  );
  if (merged === "nothing") return { status: 204 };
  if (merged === "conflict") return { status: 409, body: { message: "Merge conflict" } };
  return { status: 201, body: commitJson(ctx.base, repo, await readCommit(bare, merged)) };
}

/**
 * A pull request's mergeability as GET .../pulls/{pull_number} answers it: null and "unknown" while
 * GitHub computes it (`mergeabilityPending` reads), false and "dirty" when head and base conflict,
 * "draft" for a draft, "unstable" when a check or status on the head failed, else "clean".
 */
export async function mergeability(ctx: RouteContext, repo: StandInRepo, pull: StandInPull) {
  if (pull.mergeabilityPending) {
    pull.mergeabilityPending--;
    return { mergeable: null, rebaseable: null, mergeable_state: "unknown" };
  }
  const base = await ctx.ci.resolve(repo.owner, repo.name, `refs/heads/${pull.base}`);
  const head = await ctx.ci.resolve(repo.owner, repo.name, `refs/heads/${pull.head}`);
  if (!base || !head) return { mergeable: null, rebaseable: null, mergeable_state: "unknown" };
  if (!(await mergeTree(ctx.ci.repoDir(repo.owner, repo.name), base, head)))
    return { mergeable: false, rebaseable: false, mergeable_state: "dirty" };
  const here = (x: { owner: string; repo: string }) => x.owner === repo.owner && x.repo === repo.name;
  const runs = ctx.ci.checkRuns.filter((r) => here(r) && r.headSha === head && r.status === "completed");
  const failed =
    !["success", "neutral", null].includes(rollUp(runs.map((r) => r.conclusion))) ||
    ctx.ci.statuses.some((s) => here(s) && s.sha === head && (s.state === "failure" || s.state === "error"));
  const state = pull.draft ? "draft" : failed ? "unstable" : "clean";
  return { mergeable: true, rebaseable: true, mergeable_state: state };
}

export function compareRoutes(helpers: RouteHelpers): Route[] {
  return [
    {
      method: "GET",
      pattern: new RegExp(`^${R}/compare/(.+)$`),
      auth: "installation",
      handler: helpers.withRepo((ctx, repo) => compare(ctx, repo, helpers)),
    },
    {
      method: "POST",
      pattern: new RegExp(`^${R}/merges$`),
      auth: "installation",
      handler: helpers.withRepo(merge),
    },
  ];
}
