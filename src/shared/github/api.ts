/**
 * The part of Octokit the GitHub helpers use. Probot's `context.octokit` and an installation Octokit
 * of the worker both fit, so the helpers take it as a parameter and construct nothing.
 */
import { AgentFixError } from "../errors.js";

interface Response<T> {
  data: T;
}

export interface CommentData {
  id: number;
  html_url: string;
  body?: string | null;
  user?: { login: string; type?: string } | null;
}

export interface PullData {
  number: number;
  html_url: string;
  draft?: boolean;
}

export interface GitHubApi {
  rest: {
    issues: {
      createComment(params: {
        owner: string;
        repo: string;
        issue_number: number;
        body: string;
      }): Promise<Response<CommentData>>;
      updateComment(params: {
        owner: string;
        repo: string;
        comment_id: number;
        body: string;
      }): Promise<Response<CommentData>>;
    };
    reactions: {
      createForIssue(params: {
        owner: string;
        repo: string;
        issue_number: number;
        content: "eyes" | "+1" | "rocket";
      }): Promise<unknown>;
      createForIssueComment(params: {
        owner: string;
        repo: string;
        comment_id: number;
        content: "eyes" | "+1" | "-1" | "rocket";
      }): Promise<unknown>;
    };
    repos: {
      getCollaboratorPermissionLevel(params: {
        owner: string;
        repo: string;
        username: string;
      }): Promise<Response<{ permission: string; role_name?: string }>>;
    };
    pulls: {
      list(params: {
        owner: string;
        repo: string;
        head: string;
        state: "open";
      }): Promise<Response<PullData[]>>;
      create(params: {
        owner: string;
        repo: string;
        title: string;
        head: string;
        base: string;
        body: string;
        draft: boolean;
      }): Promise<Response<PullData>>;
      update(params: {
        owner: string;
        repo: string;
        pull_number: number;
        title: string;
        body: string;
      }): Promise<Response<PullData>>;
      requestReviewers(params: {
        owner: string;
        repo: string;
        pull_number: number;
        reviewers?: string[];
        /** Team slugs of the repository's organisation. */
        team_reviewers?: string[];
      }): Promise<unknown>;
    };
  };
}

export interface RepoRef {
  owner: string;
  repo: string;
}

/** The HTTP status of an Octokit RequestError, if it is one. */
export function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

/**
 * A failed GitHub call as the app's error: retryable when GitHub may answer later (5xx, rate limit,
 * no answer at all), not when the request itself was refused.
 */
export function githubFailure(error: unknown, what: string): AgentFixError {
  const status = httpStatus(error) ?? 0;
  return new AgentFixError(
    `GitHub failed while ${what}: ${error instanceof Error ? error.message : String(error)}`,
    {
      code: `github_${status || "network"}`,
      fault: "github",
      retryable: status === 0 || status >= 500 || status === 429,
      cause: error,
    },
  );
}
