/**
 * A repository's pull request template (issue 24), which the model fills in as the pull request's
 * description. Found where GitHub looks for it (docs: "Creating a pull request template for your
 * repository"): `pull_request_template` (any case, `.md`, `.txt` or no extension) in `.github/`, the root
 * or `docs/`, else the single file of a `PULL_REQUEST_TEMPLATE/` directory there (several are chosen
 * between by a query parameter, which the app has none of); else the owner's `.github` repository's,
 * GitHub's default for the account. Read on the default branch through the contents API like the
 * config (repo-config.ts), never from a checkout; a template that is no regular file or is too
 * large is left out, and a long one is cut with a note: it is shown to the model on top of everything else.
 */
import { githubFailure } from "../../../src/shared/github/index.js";
import type { PullRequestTemplate } from "../../agent/index.js";
import { ORG_CONFIG_REPO } from "../../config/org-defaults.js";
import { type ContentsApi, readContents, type Where } from "./contents.js";

/** Larger files are not read: no sensible template is anywhere near. */
const MAX_TEMPLATE_BYTES = 64 * 1024;
/** The most of a template the model is shown. */
export const TEMPLATE_MAX_CHARS = 8_000;

/** The folders GitHub looks in, in the order they are tried here. */
const FOLDERS = [".github", "", "docs"] as const;
const TEMPLATE_FILE = /^pull_request_template(\.(md|markdown|txt))?$/i;
const TEMPLATE_DIR = /^pull_request_template$/i;

interface Entry {
  type?: string;
  name?: string;
  path?: string;
}

/** A directory's entries through the contents API; none when it does not exist or is no directory. */
async function listing(api: ContentsApi, where: Where, path: string): Promise<Entry[]> {
  try {
    const { data } = await api.rest.repos.getContent({
      owner: where.owner,
      repo: where.repo,
      path,
      ...(where.ref ? { ref: where.ref } : {}),
    });
    return Array.isArray(data) ? (data as Entry[]) : [];
  } catch (error) {
    if ((error as { status?: number }).status === 404) return [];
    throw githubFailure(error, `listing ${path || "the root"} of ${where.owner}/${where.repo}`);
  }
}

/** Where the repository's template is, by GitHub's rules above; null when it has none. */
async function templatePath(api: ContentsApi, where: Where): Promise<string | null> {
  const folders = await Promise.all(FOLDERS.map((folder) => listing(api, where, folder)));
  for (const entries of folders) {
    const file = entries.find((entry) => entry.type === "file" && TEMPLATE_FILE.test(entry.name ?? ""));
    if (file?.path) return file.path;
  }
  for (const entries of folders) {
    const dir = entries.find((entry) => entry.type === "dir" && TEMPLATE_DIR.test(entry.name ?? ""));
    if (!dir?.path) continue;
    const files = (await listing(api, where, dir.path)).filter(
      (entry) => entry.type === "file" && /(\.(md|markdown|txt)|^[^.]+)$/i.test(entry.name ?? ""),
    );
    if (files.length === 1 && files[0]!.path) return files[0]!.path;
  }
  return null;
}

/** The template at its path, bounded; null when it is no regular file, too large or empty. */
async function readTemplate(
  api: ContentsApi,
  where: Where,
  path: string,
): Promise<PullRequestTemplate | null> {
  const read = await readContents(api, where, path, MAX_TEMPLATE_BYTES);
  if (read.kind !== "file") return null;
  const text = read.text.replace(/\r\n?/g, "\n").trim();
  if (text === "") return null;
  if (text.length <= TEMPLATE_MAX_CHARS) return { path, text };
  const cut = `${text.slice(0, TEMPLATE_MAX_CHARS).trimEnd()}\n\n[The template was cut here: ${TEMPLATE_MAX_CHARS} of ${text.length} characters shown.]`;
  return { path, text: cut };
}

/**
 * The repository's pull request template on its default branch, or its owner's default one (`org`:
 * the owner's `.github` repository, when the installation can read it); null when neither has one.
 */
export async function findPullRequestTemplate(
  sources: { repo: ContentsApi; org: ContentsApi | null },
  where: { owner: string; repo: string; defaultBranch: string },
): Promise<PullRequestTemplate | null> {
  const repo: Where = { owner: where.owner, repo: where.repo, ref: where.defaultBranch };
  const own = await templatePath(sources.repo, repo);
  if (own) return readTemplate(sources.repo, repo, own);
  if (!sources.org || where.repo === ORG_CONFIG_REPO) return null;
  const org: Where = { owner: where.owner, repo: ORG_CONFIG_REPO };
  const shared = await templatePath(sources.org, org);
  if (!shared) return null;
  const template = await readTemplate(sources.org, org, shared);
  return template && { ...template, path: `${where.owner}/${ORG_CONFIG_REPO}: ${template.path}` };
}
