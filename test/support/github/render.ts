/** JSON shapes of the stand-in's answers: the fields of GitHub's REST API that clients read. */
import type { StandInComment, StandInIssue, StandInPull, StandInRepo, StandInUser } from "./state.js";

export function userJson(user: StandInUser) {
  return { login: user.login, id: user.id, type: user.type, node_id: `U_${user.id}` };
}

export function repoJson(base: string, repo: StandInRepo) {
  return {
    id: repo.id,
    node_id: `R_${repo.id}`,
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    owner: { login: repo.owner, id: repo.id + 1, type: "Organization" },
    private: true,
    default_branch: repo.defaultBranch,
    html_url: `${base}/${repo.owner}/${repo.name}`,
    clone_url: `${base}/${repo.owner}/${repo.name}.git`,
    url: `${base}/api/v3/repos/${repo.owner}/${repo.name}`,
  };
}

export function issueJson(base: string, issue: StandInIssue) {
  return {
    id: issue.number + 500_000,
    number: issue.number,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    labels: issue.labels.map((name) => ({ name })),
    user: userJson(issue.user),
    html_url: `${base}/${issue.owner}/${issue.repo}/issues/${issue.number}`,
  };
}

export function commentJson(base: string, comment: StandInComment) {
  return {
    id: comment.id,
    node_id: `IC_${comment.id}`,
    body: comment.body,
    user: userJson(comment.user),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    html_url: `${base}/${comment.owner}/${comment.repo}/issues/${comment.issueNumber}#issuecomment-${comment.id}`,
    issue_url: `${base}/api/v3/repos/${comment.owner}/${comment.repo}/issues/${comment.issueNumber}`,
  };
}

export function pullJson(base: string, pull: StandInPull, headSha: string) {
  return {
    id: pull.number + 900_000,
    number: pull.number,
    title: pull.title,
    body: pull.body,
    state: pull.state,
    draft: pull.draft,
    user: userJson(pull.user),
    head: {
      ref: pull.head,
      sha: pull.headSha ?? headSha,
      label: `${pull.owner}:${pull.head}`,
      repo: { name: pull.repo, full_name: `${pull.owner}/${pull.repo}`, owner: { login: pull.owner } },
    },
    base: { ref: pull.base, sha: pull.baseSha ?? "" },
    merged_at: pull.mergedAt ?? null,
    created_at: pull.createdAt ?? null,
    updated_at: pull.updatedAt ?? null,
    requested_reviewers: pull.reviewRequests.map((login) => ({ login })),
    html_url: `${base}/${pull.owner}/${pull.repo}/pull/${pull.number}`,
  };
}
