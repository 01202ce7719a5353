/**
 * Signed webhook deliveries for tests: payloads shaped like GitHub's (the fields the app reads),
 * built from the GitHub stand-in's state, signed with @octokit/webhooks-methods and POSTed.
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { sign } from "@octokit/webhooks-methods";
import type { GitHubServer } from "./github-server.js";
import { eventTime } from "./stack-parts.js";

interface Sender {
  login: string;
  type?: "User" | "Bot";
}

export interface Delivery {
  event: string;
  payload: Record<string, unknown>;
  /** X-GitHub-Delivery; a redelivery repeats the same id. */
  id?: string;
}

/** POSTs a signed delivery; returns the HTTP status. */
export async function deliver(url: string, secret: string, delivery: Delivery): Promise<number> {
  const body = JSON.stringify(delivery.payload);
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": delivery.event,
      "x-github-delivery": delivery.id ?? randomUUID(),
      "x-hub-signature-256": await sign(secret, body),
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

function user(sender: Sender, id = 1) {
  return { login: sender.login, id, type: sender.type ?? "User" };
}

function base(github: GitHubServer, owner: string, repo: string, sender: Sender) {
  const stored = github.state.repo(owner, repo);
  if (!stored) throw new Error(`the stand-in has no repository ${owner}/${repo}`);
  return {
    installation: { id: stored.installationId },
    repository: {
      id: stored.id,
      name: repo,
      full_name: `${owner}/${repo}`,
      owner: { login: owner, id: stored.id + 1, type: "Organization" },
      default_branch: stored.defaultBranch,
      private: true,
    },
    sender: user(sender),
  };
}

function issueJson(github: GitHubServer, owner: string, repo: string, number: number) {
  const issue = github.state.issue(owner, repo, number);
  if (!issue) throw new Error(`the stand-in has no issue ${owner}/${repo}#${number}`);
  return {
    number,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    labels: issue.labels.map((name) => ({ name })),
    user: user(issue.user),
    // What the event changed is new on GitHub: two events are never the same bytes (see eventTime).
    updated_at: eventTime(),
  };
}

/** issues.labeled / issues.unlabeled; also applies the label change to the stand-in's issue. */
export function labelEvent(
  github: GitHubServer,
  target: { owner: string; repo: string; issue: number },
  action: "labeled" | "unlabeled",
  label: string,
  sender: Sender,
): Delivery {
  const issue = github.state.issue(target.owner, target.repo, target.issue);
  if (issue && action === "labeled" && !issue.labels.includes(label)) issue.labels.push(label);
  if (issue && action === "unlabeled") issue.labels = issue.labels.filter((l) => l !== label);
  return {
    event: "issues",
    payload: {
      action,
      label: { name: label },
      issue: issueJson(github, target.owner, target.repo, target.issue),
      ...base(github, target.owner, target.repo, sender),
    },
  };
}

export function closedEvent(
  github: GitHubServer,
  target: { owner: string; repo: string; issue: number },
  sender: Sender,
): Delivery {
  const issue = github.state.issue(target.owner, target.repo, target.issue);
  if (issue) issue.state = "closed";
  return {
    event: "issues",
    payload: {
      action: "closed",
      issue: issueJson(github, target.owner, target.repo, target.issue),
      ...base(github, target.owner, target.repo, sender),
    },
  };
}

/** Stores a comment on the stand-in, as GitHub would before it sends the event. */
function storeComment(
  github: GitHubServer,
  owner: string,
  repo: string,
  issueNumber: number,
  body: string,
  sender: Sender,
) {
  const at = new Date().toISOString();
  const comment = { id: github.state.id(), owner, repo, issueNumber, body, user: user(sender) };
  github.state.comments.push({ ...comment, createdAt: at, updatedAt: at, history: [body] });
  return comment;
}

/** issue_comment.created; the comment is also stored on the stand-in (as GitHub would). */
export function commentEvent(
  github: GitHubServer,
  target: { owner: string; repo: string; issue: number },
  body: string,
  sender: Sender,
): Delivery {
  const comment = storeComment(github, target.owner, target.repo, target.issue, body, sender);
  return {
    event: "issue_comment",
    payload: {
      action: "created",
      comment: { id: comment.id, body, user: user(sender) },
      issue: issueJson(github, target.owner, target.repo, target.issue),
      ...base(github, target.owner, target.repo, sender),
    },
  };
}

/**
 * pull_request_review.submitted on a pull request of the stand-in; the review (with its line comments)
 * is also stored on the stand-in, as GitHub would, so the worker can read it back.
 */
export function reviewEvent(
  github: GitHubServer,
  target: { owner: string; repo: string; pull: number },
  state: "approved" | "changes_requested" | "commented",
  sender: Sender,
  review: { body?: string; comments?: { path: string; line: number; body: string }[] } = {},
): Delivery {
  const pull = github.state.pull(target.owner, target.repo, target.pull);
  if (!pull)
    throw new Error(`the stand-in has no pull request ${target.owner}/${target.repo}#${target.pull}`);
  const stored = github.state.repo(target.owner, target.repo);
  const id = github.state.id();
  github.state.reviews.push({
    id,
    owner: target.owner,
    repo: target.repo,
    pullNumber: pull.number,
    state: state.toUpperCase() as "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED",
    body: review.body ?? "",
    user: { ...user(sender), type: sender.type ?? "User" },
    comments: (review.comments ?? []).map((c) => ({ ...c, id: github.state.id() })),
  });
  return {
    event: "pull_request_review",
    payload: {
      action: "submitted",
      review: { id, state, body: review.body ?? "", user: user(sender), submitted_at: eventTime() },
      pull_request: {
        number: pull.number,
        title: pull.title,
        state: pull.state,
        draft: pull.draft,
        user: { login: pull.user.login, id: pull.user.id, type: pull.user.type },
        head: {
          ref: pull.head,
          repo: { id: stored?.id ?? 0, full_name: `${target.owner}/${target.repo}` },
        },
        base: { ref: pull.base, repo: { id: stored?.id ?? 0 } },
      },
      ...base(github, target.owner, target.repo, sender),
    },
  };
}

/** issue_comment.created on a pull request of the stand-in (GitHub sends PR comments as issue comments). */
export function pullCommentEvent(
  github: GitHubServer,
  target: { owner: string; repo: string; pull: number },
  body: string,
  sender: Sender,
): Delivery {
  const pull = github.state.pull(target.owner, target.repo, target.pull);
  if (!pull)
    throw new Error(`the stand-in has no pull request ${target.owner}/${target.repo}#${target.pull}`);
  const comment = storeComment(github, target.owner, target.repo, pull.number, body, sender);
  return {
    event: "issue_comment",
    payload: {
      action: "created",
      comment: { id: comment.id, body, user: user(sender) },
      issue: {
        number: pull.number,
        title: pull.title,
        body: pull.body,
        state: pull.state,
        labels: [],
        user: { login: pull.user.login, id: pull.user.id, type: pull.user.type },
        pull_request: { url: `${github.apiUrl}/repos/${target.owner}/${target.repo}/pulls/${pull.number}` },
      },
      ...base(github, target.owner, target.repo, sender),
    },
  };
}

export type Example = { action?: string } & Record<string, unknown>;
const GITHUB_EXAMPLES = createRequire(import.meta.url)("@octokit/webhooks-examples") as {
  name: string;
  examples: Example[];
}[];

/**
 * GitHub's own example payload of `event`.`action` (@octokit/webhooks-examples), a fresh copy to edit;
 * `action` undefined for an event without actions (status). `pick` chooses among several examples.
 */
export function webhookExample<T extends Example = Example>(
  event: string,
  action: string | undefined,
  pick: (example: Example) => boolean = () => true,
): T {
  const found = GITHUB_EXAMPLES.find((e) => e.name === event)?.examples.find(
    (e) => e.action === action && pick(e),
  );
  if (!found)
    throw new Error(`@octokit/webhooks-examples has no ${event}${action ? `.${action}` : ""} example`);
  return structuredClone(found) as T;
}
