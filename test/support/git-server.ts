/**
 * A git server for tests: clone and push over smart HTTP through `git http-backend` (CGI) behind a
 * node http server, with bare repositories in a temp dir and the same token check as the GitHub
 * stand-in (`Authorization: basic x-access-token:TOKEN`, as GitHub accepts). It records every push.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ExecFailure, execInHelper } from "./exec-in-helper.js";
import {
  type FreshTokenRefusal,
  type PushFaults,
  REFUSED_TOKEN_ANSWER,
  withGitHubReasons,
} from "./git-refusals.js";

/** Answers whether a token is currently valid, and for which owner/repo ("" when it is not). */
type TokenCheck = (
  token: string,
  owner: string,
  repo: string,
  push: boolean,
) => "ok" | "expired" | "unknown" | "forbidden" | "not_found";

export interface PushRecord {
  owner: string;
  repo: string;
  /** ref -> sha before and after the push ("" = absent). */
  before: Record<string, string>;
  after: Record<string, string>;
  at: string;
}

interface GitHandlerOptions {
  root: string;
  checkToken: TokenCheck;
  pushes: PushRecord[];
  /** New tokens refused for their first uses (see git-refusals.ts). */
  freshTokens?: FreshTokenRefusal;
  /** Pushes answered with a server error, or held (see git-refusals.ts). */
  pushFaults?: PushFaults;
}

const GIT_PATH = /^\/([^/]+)\/([^/]+?)\.git(\/(?:info\/refs|git-upload-pack|git-receive-pack))$/;

/** Handles a git smart-HTTP request; returns false when the path is not a git path. */
export function handleGitRequest(
  options: GitHandlerOptions,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  const url = new URL(req.url ?? "/", "http://localhost");
  const match = GIT_PATH.exec(url.pathname);
  if (!match) return false;
  const [, owner = "", repo = "", action = ""] = match;
  const token = tokenFrom(req.headers.authorization);
  if (!token) {
    res.writeHead(401, { "WWW-Authenticate": 'Basic realm="GitHub"' }).end("Authentication required\n");
    return true;
  }
  const isPush = action === "/git-receive-pack" || url.searchParams.get("service") === "git-receive-pack";
  const verdict = options.checkToken(token, owner, repo, isPush);
  if (verdict === "not_found") {
    // GitHub's answer for a repository the token cannot see.
    res.writeHead(404).end("Repository not found.\n");
    return true;
  }
  if (verdict !== "ok") {
    res.writeHead(verdict === "forbidden" ? 403 : 401, { "WWW-Authenticate": 'Basic realm="GitHub"' });
    res.end(`Token ${verdict}\n`);
    return true;
  }
  if (options.freshTokens?.refuses(token)) {
    res.writeHead(REFUSED_TOKEN_ANSWER.status, REFUSED_TOKEN_ANSWER.headers).end(REFUSED_TOKEN_ANSWER.body);
    return true;
  }
  if (
    action === "/git-receive-pack" &&
    req.method === "POST" &&
    options.pushFaults?.intercept(owner, repo, req, res)
  ) {
    return true;
  }
  serveCgi(
    options,
    req,
    res,
    `/${owner}/${repo}.git${action}`,
    url.search.slice(1),
    isPush,
    owner,
    repo,
  ).catch(
    // The repository went away mid-request (the stand-in stopping): an answer, not an unhandled rejection.
    (error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(`${String(error)}\n`);
    },
  );
  return true;
}

/** The credential of an Authorization header: basic x-access-token:TOKEN, token TOKEN or Bearer TOKEN. */
export function tokenFrom(header: string | undefined): string | null {
  if (!header) return null;
  const [scheme = "", value = ""] = header.split(" ", 2);
  if (/^basic$/i.test(scheme)) {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? decoded.slice(colon + 1) : null;
  }
  if (/^(token|bearer)$/i.test(scheme)) return value;
  return null;
}

async function serveCgi(
  options: GitHandlerOptions,
  req: IncomingMessage,
  res: ServerResponse,
  pathInfo: string,
  query: string,
  isPush: boolean,
  owner: string,
  repo: string,
): Promise<void> {
  const repoDir = join(options.root, owner, `${repo}.git`);
  const before = isPush && req.method === "POST" ? await listRefs(repoDir) : null;
  // The request goes in whole and the answer comes out whole (CGI headers, a blank line, the body); git
  // runs from the exec helper, not as a spawn of the test process.
  const body: Buffer[] = [];
  for await (const chunk of req) body.push(chunk as Buffer);
  const { code, output } = await execInHelper("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      GIT_PROJECT_ROOT: options.root,
      GIT_HTTP_EXPORT_ALL: "1",
      PATH_INFO: pathInfo,
      REQUEST_METHOD: req.method ?? "GET",
      QUERY_STRING: query,
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      ...(req.headers["content-length"] ? { CONTENT_LENGTH: req.headers["content-length"] } : {}),
      ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: req.headers["content-encoding"] } : {}),
      ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
      REMOTE_USER: "x-access-token",
      REMOTE_ADDR: "127.0.0.1",
    },
    input: Buffer.concat(body),
  }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (failure: ExecFailure) => ({
      code: typeof failure.code === "number" ? failure.code : 1,
      output: failure.stdout ?? Buffer.alloc(0),
    }),
  );
  let split = output.indexOf("\r\n\r\n");
  let sepLength = 4;
  if (split < 0) {
    split = output.indexOf("\n\n");
    sepLength = 2;
  }
  if (code !== 0 && split < 0) {
    res.writeHead(500).end(`git http-backend exited ${code}\n`);
    return;
  }
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of output.subarray(0, split).toString("utf8").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (/^status$/i.test(name)) status = Number.parseInt(value, 10);
    else headers[name] = value;
  }
  // Record before answering, so a client that sees its push done also sees it recorded.
  if (before) {
    const after = await listRefs(repoDir);
    if (JSON.stringify(after) !== JSON.stringify(before)) {
      options.pushes.push({ owner, repo, before, after, at: new Date().toISOString() });
    }
  }
  const answer = output.subarray(split + sepLength);
  // A push refused by a rule says why, as GitHub's server does (git itself only says "hook declined").
  res.writeHead(status, headers).end(before ? withGitHubReasons(answer) : answer);
}

/** A whole object id, as git prints one. */
export const OBJECT_ID = /^[0-9a-f]{40}$/;

/**
 * The refs of a bare repository, name -> object, sorted by name: what `git for-each-ref
 * --format='%(refname) %(objectname)'` prints, read from the repository's files as git's files backend
 * stores them (`packed-refs`, then the loose files under `refs/`, which win) instead of from a git
 * process. The stand-in reads refs on most requests and around every push, and a spawn blocks the
 * event loop for as long as the kernel copies the page tables of the test's whole process (tens of ms
 * in a vitest worker that has run many files). git writes a ref through a lock file and a rename, so a
 * read sees the ref before or after, never half of it.
 */
export async function listRefs(repoDir: string): Promise<Record<string, string>> {
  const found = new Map<string, string>();
  const packed = await readFile(join(repoDir, "packed-refs"), "utf8").catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw error;
  });
  for (const line of packed.split("\n")) {
    // "# pack-refs with: ..." heads the file; "^SHA" is the peeled object of the annotated tag above.
    const [sha = "", ref = ""] = line.split(" ");
    if (OBJECT_ID.test(sha) && ref.startsWith("refs/")) found.set(ref, sha);
  }
  const symbolic = new Map<string, string>();
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const ref = `${prefix}/${entry.name}`;
      if (entry.isDirectory()) await walk(join(dir, entry.name), ref);
      // A name ending in .lock is a write in progress, not a ref (git refuses such names).
      else if (entry.isFile() && !entry.name.endsWith(".lock")) {
        const text = (await readFile(join(dir, entry.name), "utf8").catch(() => "")).trim();
        if (OBJECT_ID.test(text)) found.set(ref, text);
        else if (text.startsWith("ref: ")) symbolic.set(ref, text.slice("ref: ".length));
      }
    }
  };
  await walk(join(repoDir, "refs"), "refs");
  // A symbolic ref (refs/remotes/origin/HEAD) lists the object of the ref it points to.
  for (const [ref, target] of symbolic) {
    const sha = found.get(target);
    if (sha) found.set(ref, sha);
  }
  return Object.fromEntries([...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The commit `ref` names when it names a branch as `git rev-parse` reads a name (refs/NAME, then
 * refs/tags/NAME, then refs/heads/NAME; git-scm.com/docs/gitrevisions), read from the repository's
 * files; null when it is a plain name that no ref has (a branch not pushed yet: what git answers too);
 * undefined when only git can say (an object id or a part of one, a tag, `HEAD`, an expression).
 */
export async function branchCommit(repoDir: string, ref: string): Promise<string | null | undefined> {
  // An object id (or its start) is read as one before any ref; an all-capitals name (HEAD,
  // FETCH_HEAD) is a file of the repository's own directory, which rev-parse reads first.
  if (/^[0-9a-f]{4,40}$/.test(ref) || /^[A-Z_]+$/.test(ref)) return undefined;
  // A repository that cannot be read (gone with its stand-in) is git's to answer.
  const refs = await listRefs(repoDir).catch(() => undefined);
  if (!refs) return undefined;
  const candidates = ref.startsWith("refs/")
    ? [ref]
    : [`refs/${ref}`, `refs/tags/${ref}`, `refs/heads/${ref}`];
  const named = candidates.find((candidate) => refs[candidate] !== undefined);
  if (named) return named.startsWith("refs/heads/") ? refs[named] : undefined;
  // Letters, digits, dots, dashes and slashes and no "..": no expression, only a ref could name it.
  return /^[\w./-]+$/.test(ref) && !ref.includes("..") ? null : undefined;
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "Stand-in",
  GIT_AUTHOR_EMAIL: "stand-in@example.com",
  GIT_COMMITTER_NAME: "Stand-in",
  GIT_COMMITTER_EMAIL: "stand-in@example.com",
};

/**
 * Creates `root/OWNER/REPO.git` with one commit holding `files` on `defaultBranch`. A hook refuses
 * pushes to the default branch, like branch protection: only `agent-fix/*` branches may be pushed.
 */
export async function createBareRepo(
  root: string,
  owner: string,
  repo: string,
  files: Record<string, string | Uint8Array>,
  defaultBranch = "main",
): Promise<string> {
  const bare = join(root, owner, `${repo}.git`);
  const work = await mkdtemp(join(tmpdir(), "af-git-seed-"));
  try {
    await mkdir(dirname(bare), { recursive: true });
    await execInHelper("git", ["init", "--quiet", "--bare", "--initial-branch", defaultBranch, bare]);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(work, path)), { recursive: true });
      await writeFile(join(work, path), content);
    }
    // Committed from the files straight into the bare repository (its own work tree for two commands),
    // as `git add -A` reads them (.gitignore, .gitattributes): three git processes, not a clone and a
    // push's five, each of which blocks the test process while it starts.
    const env = { ...process.env, ...GIT_IDENTITY, GIT_DIR: bare, GIT_WORK_TREE: work };
    await execInHelper("git", ["add", "-A"], { cwd: work, env });
    await execInHelper("git", ["commit", "--quiet", "-m", "Initial commit"], { cwd: work, env });
    // What committing left that a pushed-to bare repository does not have.
    for (const left of ["index", "COMMIT_EDITMSG", "logs"])
      await rm(join(bare, left), { recursive: true, force: true });
    const hook = `#!/bin/sh\nif [ "$1" = "refs/heads/${defaultBranch}" ]; then echo "protected branch ${defaultBranch}: push refused" >&2; exit 1; fi\n`;
    await writeFile(join(bare, "hooks", "update"), hook, { mode: 0o755 });
    return bare;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
