/**
 * What the GitHub stand-in knows and records: repositories, issues, comments, reactions, labels,
 * pull requests, review requests, permissions, and every API request it answered.
 */

export interface StandInUser {
  login: string;
  id: number;
  type: "User" | "Bot";
}

export interface StandInComment {
  id: number;
  owner: string;
  repo: string;
  issueNumber: number;
  body: string;
  user: StandInUser;
  createdAt: string;
  updatedAt: string;
  /** Every body this comment had, oldest first (edits in place are visible). */
  history: string[];
}

interface StandInReaction {
  id: number;
  owner: string;
  repo: string;
  /** Issue number, or undefined for a reaction on a comment. */
  issueNumber?: number;
  commentId?: number;
  content: string;
  user: StandInUser;
}

export interface StandInIssue {
  owner: string;
  repo: string;
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  user: StandInUser;
}

export interface StandInPull {
  owner: string;
  repo: string;
  number: number;
  title: string;
  body: string;
  head: string;
  base: string;
  draft: boolean;
  state: "open" | "closed";
  user: StandInUser;
  reviewRequests: string[];
  /** Team slugs review was requested from (`team_reviewers`); a team with access is `ORG/SLUG` in permissions. */
  teamReviewRequests?: string[];
  /** A pull request of the repository's history (see history-routes.ts): its commits and times. */
  baseSha?: string;
  headSha?: string;
  mergedAt?: string | null;
  createdAt?: string;
  updatedAt?: string;
  /** The next reads of GET .../pulls/{n} answer `mergeable: null` ("unknown"), as GitHub does while it computes it. */
  mergeabilityPending?: number;
}

/** A submitted pull request review; its line comments are `comments`. */
export interface StandInReview {
  id: number;
  owner: string;
  repo: string;
  pullNumber: number;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
  body: string;
  user: StandInUser;
  comments: StandInReviewComment[];
}

export interface StandInReviewComment {
  id: number;
  path: string;
  line: number;
  /** Replies in the comment's thread (POST .../pulls/{pull_number}/comments/{comment_id}/replies). */
  replies?: Array<{ id: number; body: string; user: StandInUser }>;
  body: string;
}

export interface StandInRepo {
  id: number;
  owner: string;
  name: string;
  defaultBranch: string;
  installationId: number;
  /** login -> admin | maintain | write | triage | read */
  permissions: Map<string, string>;
  /** The owner's GitHub plan (the stand-in's repositories are private); drafts need team or above. */
  plan?: "free" | "pro" | "team" | "enterprise";
}

export interface RequestRecord {
  method: string;
  path: string;
  status: number;
  /** "app" (JWT), "installation:ID", or "anonymous". */
  actor: string;
  /** The installation token the request used ("installation:ID" actors; git requests too). */
  token?: string;
  /** Answered by an injected fault (failNext, rateLimitNext), not by the route. */
  fault?: true;
  /** When the answer was sent (epoch ms, sub-millisecond): where a webhook's time goes (bench/pipeline.ts). */
  answeredAt?: number;
}

interface IssuedToken {
  token: string;
  installationId: number;
  expiresAt: number;
  /** What the token may reach, when it was minted with repository_ids/permissions (github/token-scopes.ts). */
  scope?: { repositoryIds: number[] | null; permissions: Record<string, "read" | "write"> };
  /** When DELETE /installation/token revoked it. */
  revokedAt?: number;
}

export class StandInState {
  readonly repos: StandInRepo[] = [];
  readonly issues: StandInIssue[] = [];
  readonly comments: StandInComment[] = [];
  readonly reactions: StandInReaction[] = [];
  readonly pulls: StandInPull[] = [];
  readonly reviews: StandInReview[] = [];
  readonly tokens = new Map<string, IssuedToken>();
  /**
   * What each installation was granted (permission -> read | write), when a test says so; otherwise
   * what the app asks for in app.yml (github/token-scopes.ts). Every token of it is held to these.
   */
  readonly installationPermissions = new Map<number, Record<string, "read" | "write">>();
  readonly requests: RequestRecord[] = [];
  private nextId = 1000;

  id(): number {
    return this.nextId++;
  }

  repo(owner: string, name: string): StandInRepo | undefined {
    return this.repos.find((r) => r.owner === owner && r.name === name);
  }

  issue(owner: string, repo: string, number: number): StandInIssue | undefined {
    return this.issues.find((i) => i.owner === owner && i.repo === repo && i.number === number);
  }

  pull(owner: string, repo: string, number: number): StandInPull | undefined {
    return this.pulls.find((p) => p.owner === owner && p.repo === repo && p.number === number);
  }

  review(owner: string, repo: string, id: number): StandInReview | undefined {
    return this.reviews.find((r) => r.owner === owner && r.repo === repo && r.id === id);
  }

  /** Issues and pull requests share one number sequence per repository, as on GitHub. */
  nextNumber(owner: string, repo: string): number {
    const numbers = [
      ...this.issues.filter((i) => i.owner === owner && i.repo === repo).map((i) => i.number),
      ...this.pulls.filter((p) => p.owner === owner && p.repo === repo).map((p) => p.number),
    ];
    return Math.max(0, ...numbers) + 1;
  }

  commentsOn(owner: string, repo: string, issueNumber: number): StandInComment[] {
    return this.comments.filter((c) => c.owner === owner && c.repo === repo && c.issueNumber === issueNumber);
  }

  permission(repo: StandInRepo, login: string): string {
    return repo.permissions.get(login) ?? "none";
  }
}
