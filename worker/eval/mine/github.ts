/**
 * `agent-fix mine`'s GitHub side, with a personal or installation token: the app's own Octokit setup
 * (Probot's Octokit with rate limits waited out, src/shared/github/throttle.ts) and API base URL (GHE_HOST
 * and GHE_PROTOCOL, as the app reads them), so it works against github.com and GitHub Enterprise.
 */
import type { ProbotOctokit } from "probot";
import { githubApiUrl } from "../../../src/shared/config/env.js";
import { throttledOctokit, WORKER_THROTTLE } from "../../../src/shared/github/throttle.js";
import { githubSettings } from "./token.js";

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
