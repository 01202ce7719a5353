/**
 * GET /repos/{owner}/{repo}/git/trees/{tree_sha} as GitHub documents it (@octokit/openapi, "Get a
 * tree"): `tree_sha` is a tree or commit SHA or a branch or tag name; with `recursive` (any value)
 * every entry below it, else the top level; blobs carry their size; an unknown tree is 404.
 */
import { join } from "node:path";
import { execInHelper } from "../exec-in-helper.js";
import type { Route, RouteContext, RouteResult } from "./routes.js";
import type { StandInRepo } from "./state.js";

interface Helpers {
  withRepo(
    handler: (ctx: RouteContext, repo: StandInRepo) => Promise<RouteResult> | RouteResult,
  ): Route["handler"];
  notFound(what?: string): RouteResult;
}

async function getTree(ctx: RouteContext, repo: StandInRepo, helpers: Helpers): Promise<RouteResult> {
  const bare = join(ctx.gitRoot, repo.owner, `${repo.name}.git`);
  const ref = decodeURIComponent(ctx.params[2] ?? "");
  const git = (...args: string[]) =>
    execInHelper("git", args, { cwd: bare }).then(({ stdout }) => ({ stdout: stdout.toString("utf8") }));
  const sha = await git("rev-parse", "--verify", "--quiet", `${ref}^{tree}`).then(
    ({ stdout }) => stdout.trim(),
    () => null,
  );
  if (!sha) return helpers.notFound();
  const recursive = ctx.query.has("recursive");
  const { stdout } = await git("ls-tree", "-z", "--long", ...(recursive ? ["-r", "-t"] : []), sha);
  const base = `${ctx.base}/repos/${repo.owner}/${repo.name}/git`;
  const tree = stdout
    .split("\0")
    .filter(Boolean)
    .map((record) => {
      const [meta = "", path = ""] = record.split("\t");
      const [mode = "", type = "", entrySha = "", size = "-"] = meta.split(/\s+/);
      return {
        path,
        mode,
        type,
        sha: entrySha,
        ...(type === "blob" ? { size: Number(size) } : {}),
        url: `${base}/${type === "blob" ? "blobs" : "trees"}/${entrySha}`,
      };
    });
  return { status: 200, body: { sha, url: `${base}/trees/${sha}`, tree, truncated: false } };
}

export function treeRoutes(helpers: Helpers): Route[] {
  return [
    {
      method: "GET",
      pattern: /^\/repos\/([^/]+)\/([^/]+)\/git\/trees\/(.+)$/,
      auth: "installation",
      handler: helpers.withRepo((ctx, repo) => getTree(ctx, repo, helpers)),
    },
  ];
}
