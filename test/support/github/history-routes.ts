/**
 * What `agent-fix mine` reads of a repository's history: closed pull requests page by page (GitHub's
 * `per_page`, `page` and Link header) in GitHub's sort orders, and a pull request's files computed
 * with git from the bare repository, in the shape of GET /repos/{owner}/{repo}/pulls/{pull_number}/files.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RouteContext, RouteResult } from "./routes.js";
import type { StandInPull, StandInRepo } from "./state.js";

/**
 * A page of `items` as GitHub pages lists: per_page (default 30, at most 100) and page (from 1), with
 * a Link header naming the first, previous, next and last pages that exist.
 * https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api
 */
export function paged<T>(ctx: RouteContext, path: string, items: readonly T[]): RouteResult {
  const perPage = Math.min(100, Math.max(1, Number(ctx.query.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(ctx.query.get("page") ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const url = (n: number) => {
    const query = new URLSearchParams(ctx.query);
    query.set("per_page", String(perPage));
    query.set("page", String(n));
    return `<${ctx.base}/api/v3${path}?${query}>`;
  };
  const links = [
    ...(page > 1 ? [`${url(page - 1)}; rel="prev"`] : []),
    ...(page < last ? [`${url(page + 1)}; rel="next"`, `${url(last)}; rel="last"`] : []),
    ...(page > 1 ? [`${url(1)}; rel="first"`] : []),
  ];
  return {
    status: 200,
    body: items.slice((page - 1) * perPage, page * perPage),
    ...(links.length ? { headers: { link: links.join(", ") } } : {}),
  };
}

/**
 * GitHub's orders of GET .../pulls: `sort` created (default), updated, popularity, long-running;
 * `direction` desc by default when sorting by creation, else asc.
 */
export function sortPulls(
  pulls: StandInPull[],
  sort: string | null,
  direction: string | null,
): StandInPull[] {
  const key = sort === "updated" ? "updatedAt" : "createdAt";
  const descending = (direction ?? (sort === null || sort === "created" ? "desc" : "asc")) === "desc";
  const at = (pull: StandInPull) => pull[key] ?? "";
  return [...pulls].sort(
    (a, b) => (descending ? -1 : 1) * (at(a).localeCompare(at(b)) || a.number - b.number),
  );
}

const STATUS: Record<string, string> = { A: "added", M: "modified", D: "removed", R: "renamed", C: "copied" };

/** The files of a pull request from the merge base of its base and head, as GitHub lists them. */
export async function pullFilesJson(ctx: RouteContext, repo: StandInRepo, pull: StandInPull) {
  const gitDir = join(ctx.gitRoot, repo.owner, `${repo.name}.git`);
  const range = `${pull.baseSha}...${pull.headSha}`;
  const git = async (...args: string[]) =>
    (await promisify(execFile)("git", ["--git-dir", gitDir, ...args])).stdout
      .trim()
      .split("\n")
      .filter(Boolean);
  const counts = await git("diff", "--numstat", "-M", range);
  return (await git("diff", "--name-status", "-M", range)).map((line, index) => {
    const [code = "", first = "", second] = line.split("\t");
    const [added = "0", deleted = "0"] = (counts[index] ?? "").split("\t");
    const additions = Number(added) || 0;
    const deletions = Number(deleted) || 0;
    return {
      filename: second ?? first,
      status: STATUS[code[0] ?? "M"] ?? "modified",
      additions,
      deletions,
      changes: additions + deletions,
      ...(second ? { previous_filename: first } : {}),
    };
  });
}
