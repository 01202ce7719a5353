/**
 * Reading a repository's files through GitHub's REST API (contents and git trees), never from a
 * checkout on the host: a symlink in the repository must not make the worker read a host file.
 */
import { githubFailure } from "../../../src/shared/github/index.js";

/** The slice of Octokit this needs: the contents API and the git trees API. */
export interface ContentsApi {
  rest: {
    repos: {
      getContent(params: { owner: string; repo: string; path: string; ref?: string }): Promise<{
        data: unknown;
      }>;
    };
    git: {
      getTree(params: { owner: string; repo: string; tree_sha: string; recursive?: string }): Promise<{
        data: { truncated: boolean; tree: { path?: string; mode?: string; type?: string }[] };
      }>;
    };
  };
}

export interface Where {
  owner: string;
  repo: string;
  /** A branch; undefined: the repository's default branch. */
  ref?: string | undefined;
}

type ContentsRead =
  | { kind: "file"; text: string }
  | { kind: "missing" }
  | { kind: "not_a_file"; what: string }
  | { kind: "too_large"; size: number };

interface ContentEntry {
  type?: string;
  size?: number;
  encoding?: string;
  content?: string;
  target?: string;
}

/**
 * A reader that has begun reading `paths` (all at once: each is a round trip to GitHub, and looked up in
 * series they add up on the path of every run); any other path is read when asked. A read that failed
 * counts only when its path is asked for.
 */
export function readingAhead<T>(
  read: (path: string) => Promise<T>,
  paths: readonly string[],
): (path: string) => Promise<T> {
  const ahead = new Map<string, Promise<T>>();
  for (const path of paths) {
    const pending = read(path);
    pending.catch(() => {});
    ahead.set(path, pending);
  }
  return (path) => ahead.get(path) ?? read(path);
}

/** A file's text, or why there is none (404: the file or the repository does not exist for this token). */
export async function readContents(
  api: ContentsApi,
  where: Where,
  path: string,
  maxBytes: number,
): Promise<ContentsRead> {
  let data: unknown;
  try {
    ({ data } = await api.rest.repos.getContent({
      owner: where.owner,
      repo: where.repo,
      path,
      ...(where.ref ? { ref: where.ref } : {}),
    }));
  } catch (error) {
    if ((error as { status?: number }).status === 404) return { kind: "missing" };
    throw githubFailure(error, `reading ${path} of ${where.owner}/${where.repo}`);
  }
  const entry = (Array.isArray(data) ? { type: "dir" } : data) as ContentEntry;
  if (entry.type !== "file") {
    const what = entry.type === "symlink" ? `a symlink (to ${entry.target ?? "?"})` : `a ${entry.type}`;
    return { kind: "not_a_file", what };
  }
  if ((entry.size ?? 0) > maxBytes || entry.encoding !== "base64") {
    return { kind: "too_large", size: entry.size ?? 0 };
  }
  return { kind: "file", text: Buffer.from(entry.content ?? "", "base64").toString("utf8") };
}

/**
 * The regular files of `ref` (no symlinks, no submodules). A tree GitHub truncated (over 100,000
 * entries) gives the files it listed: detection looks near the root, which comes first.
 */
export async function listFiles(api: ContentsApi, where: Where & { ref: string }): Promise<string[]> {
  const { data } = await api.rest.git
    .getTree({ owner: where.owner, repo: where.repo, tree_sha: where.ref, recursive: "1" })
    .catch((error: unknown) => {
      throw githubFailure(error, `listing the files of ${where.owner}/${where.repo} on ${where.ref}`);
    });
  return data.tree.flatMap((entry) =>
    entry.type === "blob" && entry.mode !== "120000" && entry.path ? [entry.path] : [],
  );
}
