/**
 * `agent-fix mine`'s GitHub side, with a personal or installation token: the app's own Octokit setup
 * (Probot's Octokit with rate limits waited out, src/github/throttle.ts) and API base URL (GHE_HOST
 * and GHE_PROTOCOL, as the app reads them), so it works against github.com and GitHub Enterprise.
 */
import type { ProbotOctokit } from "probot";
import { envSchema, githubApiUrl } from "../../../src/config/env.js";
import { ConfigError } from "../../../src/errors.js";
import { throttledOctokit, WORKER_THROTTLE } from "../../../src/github/throttle.js";

/** The variables that may hold the token, in order. */
const TOKEN_VARIABLES = ["GITHUB_TOKEN", "GH_TOKEN"] as const;

export function githubToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of TOKEN_VARIABLES) if (env[name]) return env[name];
  return undefined;
}

export function requireGitHubToken(env: NodeJS.ProcessEnv = process.env): string {
  const token = githubToken(env);
  if (token) return token;
  throw new ConfigError("agent-fix mine needs a GitHub token in GITHUB_TOKEN (or GH_TOKEN)", {
    code: "mine_token_missing",
    hint: "Export GITHUB_TOKEN=... with read access to the repository's contents, pull requests and issues; for GitHub Enterprise also GHE_HOST.",
  });
}

/** Only the app's variables that say where GitHub is and how to treat its rate limits. */
const githubSettings = (env: NodeJS.ProcessEnv) =>
  envSchema.pick({ GHE_HOST: true, GHE_PROTOCOL: true, AGENT_FIX_GITHUB_THROTTLE: true }).parse(env);

/** Where git is served: https://github.com, or the GitHub Enterprise host. */
function githubWebOrigin(env: NodeJS.ProcessEnv): string {
  return new URL(githubApiUrl(githubSettings(env))).origin.replace("://api.github.com", "://github.com");
}

/** The token for cloning `url`: only for the configured GitHub's own host, never sent elsewhere. */
export function tokenForCloneUrl(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return new URL(url).origin === githubWebOrigin(env) ? githubToken(env) : undefined;
  } catch {
    // Not a URL (an scp-like git address, a path): nothing to authenticate.
    return undefined;
  }
}

export function mineClient(token: string, env: NodeJS.ProcessEnv = process.env): ProbotOctokit {
  const settings = githubSettings(env);
  const Octokit = throttledOctokit({
    id: "agent-fix-mine",
    spacing: settings.AGENT_FIX_GITHUB_THROTTLE,
    ...WORKER_THROTTLE,
  });
  return new Octokit({ auth: { token }, baseUrl: githubApiUrl(settings) });
}

export interface MergedPull {
  number: number;
  body: string | null;
  mergedAt: string;
  baseSha: string;
  headSha: string;
}

/**
 * Closed pull requests, most recently updated first, page by page; stops at the first one last
 * updated before `since` (nothing after it can have been merged since). Not merged ones come with
 * `mergedAt: null`, to be reported as skipped.
 */
export async function* closedPulls(
  octokit: ProbotOctokit,
  where: { owner: string; repo: string; since?: Date | undefined },
): AsyncGenerator<Omit<MergedPull, "mergedAt"> & { mergedAt: string | null }> {
  const pages = octokit.paginate.iterator(octokit.rest.pulls.list, {
    ...{ owner: where.owner, repo: where.repo },
    ...{ state: "closed", sort: "updated", direction: "desc", per_page: 100 },
  } as const);
  for await (const page of pages) {
    for (const pull of page.data) {
      if (where.since && new Date(pull.updated_at) < where.since) return;
      if (where.since && pull.merged_at && new Date(pull.merged_at) < where.since) continue;
      yield {
        number: pull.number,
        body: pull.body,
        mergedAt: pull.merged_at,
        baseSha: pull.base.sha,
        headSha: pull.head.sha,
      };
    }
  }
}

/** The paths a pull request changes (renamed files under both names). */
export async function pullFiles(octokit: ProbotOctokit, owner: string, repo: string, pull: number) {
  const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
    ...{ owner, repo, pull_number: pull, per_page: 100 },
  });
  return files.flatMap((file) =>
    file.previous_filename ? [file.filename, file.previous_filename] : [file.filename],
  );
}

/** An issue's title and body; null when the number is a pull request, not an issue. */
export async function issueText(octokit: ProbotOctokit, owner: string, repo: string, number: number) {
  const { data } = await octokit.rest.issues.get({ owner, repo, issue_number: number });
  if (data.pull_request) return null;
  return { title: data.title, body: data.body ?? "" };
}
