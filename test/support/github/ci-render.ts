/**
 * JSON shapes of the stand-in's CI answers, whole as GitHub's OpenAPI description requires them
 * (check-run, check-suite, check-annotation, status, combined-commit-status, workflow-run, job,
 * commit): clients read a few fields, and the stand-in's tests check every answer against the schema.
 */
import type {
  CiState,
  CommitState,
  StandInAnnotation,
  StandInApp,
  StandInCheckRun,
  StandInCheckSuite,
  StandInJob,
  StandInStatus,
  StandInWorkflowRun,
} from "./ci-state.js";
import type { GitCommit } from "./git-history.js";
import type { StandInRepo } from "./state.js";

const EPOCH = "2024-01-01T00:00:00Z";

/** A user as GitHub's simple-user schema has it. */
export function simpleUserJson(base: string, user: { login: string; id: number; type: string }) {
  const url = `${base}/api/v3/users/${encodeURIComponent(user.login)}`;
  return {
    login: user.login,
    id: user.id,
    node_id: `U_${user.id}`,
    type: user.type,
    site_admin: false,
    gravatar_id: "",
    avatar_url: `${base}/avatars/u/${user.id}`,
    html_url: `${base}/${encodeURIComponent(user.login)}`,
    url,
    events_url: `${url}/events{/privacy}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    organizations_url: `${url}/orgs`,
    received_events_url: `${url}/received_events`,
    repos_url: `${url}/repos`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
  };
}

const REPO_URLS: Record<string, string> = {
  archive_url: "/{archive_format}{/ref}",
  assignees_url: "/assignees{/user}",
  blobs_url: "/git/blobs{/sha}",
  branches_url: "/branches{/branch}",
  collaborators_url: "/collaborators{/collaborator}",
  comments_url: "/comments{/number}",
  commits_url: "/commits{/sha}",
  compare_url: "/compare/{base}...{head}",
  contents_url: "/contents/{+path}",
  contributors_url: "/contributors",
  deployments_url: "/deployments",
  downloads_url: "/downloads",
  events_url: "/events",
  forks_url: "/forks",
  git_commits_url: "/git/commits{/sha}",
  git_refs_url: "/git/refs{/sha}",
  git_tags_url: "/git/tags{/sha}",
  hooks_url: "/hooks",
  issue_comment_url: "/issues/comments{/number}",
  issue_events_url: "/issues/events{/number}",
  issues_url: "/issues{/number}",
  keys_url: "/keys{/key_id}",
  labels_url: "/labels{/name}",
  languages_url: "/languages",
  merges_url: "/merges",
  milestones_url: "/milestones{/number}",
  notifications_url: "/notifications{?since,all,participating}",
  pulls_url: "/pulls{/number}",
  releases_url: "/releases{/id}",
  stargazers_url: "/stargazers",
  statuses_url: "/statuses/{sha}",
  subscribers_url: "/subscribers",
  subscription_url: "/subscription",
  tags_url: "/tags",
  teams_url: "/teams",
  trees_url: "/git/trees{/sha}",
};

/** A repository as GitHub's minimal-repository schema has it. */
export function minimalRepoJson(base: string, repo: StandInRepo) {
  const url = `${base}/api/v3/repos/${repo.owner}/${repo.name}`;
  return {
    id: repo.id,
    node_id: `R_${repo.id}`,
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    owner: simpleUserJson(base, { login: repo.owner, id: repo.id + 1, type: "Organization" }),
    private: true,
    fork: false,
    description: null,
    default_branch: repo.defaultBranch,
    html_url: `${base}/${repo.owner}/${repo.name}`,
    clone_url: `${base}/${repo.owner}/${repo.name}.git`,
    url,
    ...Object.fromEntries(Object.entries(REPO_URLS).map(([key, path]) => [key, url + path])),
  };
}

/** A GitHub App as the integration schema has it (what check runs and suites name as `app`). */
function appJson(base: string, app: StandInApp, permissions: Record<string, string> = {}) {
  return {
    id: app.id,
    slug: app.slug,
    node_id: `A_${app.id}`,
    owner: simpleUserJson(base, { login: app.slug, id: app.id + 1, type: "Organization" }),
    name: app.name,
    description: null,
    external_url: `${base}/apps/${app.slug}`,
    html_url: `${base}/apps/${app.slug}`,
    created_at: EPOCH,
    updated_at: EPOCH,
    permissions,
    events: [],
  };
}

/** An open pull request of the same repository whose head is the commit, as pull-request-minimal. */
export interface PullHead {
  number: number;
  head: string;
  headSha: string;
  base: string;
  baseSha: string;
}

function pullMinimalJson(base: string, repo: StandInRepo, pull: PullHead) {
  const repoRef = {
    id: repo.id,
    url: `${base}/api/v3/repos/${repo.owner}/${repo.name}`,
    name: repo.name,
  };
  return {
    id: pull.number + 900_000,
    number: pull.number,
    url: `${base}/api/v3/repos/${repo.owner}/${repo.name}/pulls/${pull.number}`,
    head: { ref: pull.head, sha: pull.headSha, repo: repoRef },
    base: { ref: pull.base, sha: pull.baseSha, repo: repoRef },
  };
}

export function annotationJson(base: string, run: StandInCheckRun, a: StandInAnnotation) {
  return {
    path: a.path,
    blob_href: `${base}/${run.owner}/${run.repo}/blob/${run.headSha}/${a.path}`,
    start_line: a.start_line,
    end_line: a.end_line,
    start_column: a.start_column ?? null,
    end_column: a.end_column ?? null,
    annotation_level: a.annotation_level,
    title: a.title ?? null,
    message: a.message,
    raw_details: a.raw_details ?? null,
  };
}

export function checkRunJson(base: string, repo: StandInRepo, run: StandInCheckRun, pulls: PullHead[]) {
  const url = `${base}/api/v3/repos/${repo.owner}/${repo.name}/check-runs/${run.id}`;
  const html = `${base}/${repo.owner}/${repo.name}/runs/${run.id}`;
  return {
    id: run.id,
    node_id: `CR_${run.id}`,
    head_sha: run.headSha,
    external_id: run.externalId,
    name: run.name,
    url,
    html_url: html,
    details_url: run.detailsUrl ?? html,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: {
      ...run.output,
      annotations_count: run.annotations.length,
      annotations_url: `${url}/annotations`,
    },
    check_suite: { id: run.suiteId },
    app: appJson(base, run.app),
    pull_requests: pulls.filter((p) => p.headSha === run.headSha).map((p) => pullMinimalJson(base, repo, p)),
  };
}

export function checkSuiteJson(
  base: string,
  repo: StandInRepo,
  ci: CiState,
  suite: StandInCheckSuite,
  headCommit: GitCommit,
  pulls: PullHead[],
) {
  const url = `${base}/api/v3/repos/${repo.owner}/${repo.name}/check-suites/${suite.id}`;
  return {
    id: suite.id,
    node_id: `CS_${suite.id}`,
    head_branch: suite.headBranch,
    head_sha: suite.headSha,
    ...ci.suiteResult(suite),
    url,
    before: headCommit.parents[0] ?? null,
    after: suite.headSha,
    created_at: suite.createdAt,
    updated_at: suite.updatedAt,
    app: appJson(base, suite.app),
    head_commit: simpleCommitJson(headCommit),
    repository: minimalRepoJson(base, repo),
    latest_check_runs_count: ci.checkRuns.filter((r) => r.suiteId === suite.id).length,
    check_runs_url: `${url}/check-runs`,
    pull_requests: pulls
      .filter((p) => p.headSha === suite.headSha)
      .map((p) => pullMinimalJson(base, repo, p)),
  };
}

export function statusJson(base: string, repo: StandInRepo, status: StandInStatus) {
  return {
    id: status.id,
    node_id: `SC_${status.id}`,
    url: `${base}/api/v3/repos/${repo.owner}/${repo.name}/statuses/${status.sha}`,
    avatar_url: null,
    state: status.state,
    description: status.description,
    target_url: status.targetUrl,
    context: status.context,
    created_at: status.createdAt,
    updated_at: status.updatedAt,
    creator: simpleUserJson(base, status.creator),
  };
}

/**
 * GET .../commits/{ref}/status: the latest status of each context, and their combination: failure
 * when one is error or failure, pending when one is pending or there is none, else success.
 */
export function combinedStatusJson(base: string, repo: StandInRepo, sha: string, all: StandInStatus[]) {
  const latest = new Map<string, StandInStatus>();
  for (const status of all) if (!latest.has(status.context)) latest.set(status.context, status);
  const states = [...latest.values()].map((s) => s.state);
  const state: CommitState = states.some((s) => s === "error" || s === "failure")
    ? "failure"
    : states.length === 0 || states.includes("pending")
      ? "pending"
      : "success";
  const url = `${base}/api/v3/repos/${repo.owner}/${repo.name}`;
  return {
    state,
    sha,
    total_count: latest.size,
    statuses: [...latest.values()].map((s) => statusJson(base, repo, s)),
    repository: minimalRepoJson(base, repo),
    commit_url: `${url}/commits/${sha}`,
    url: `${url}/commits/${sha}/status`,
  };
}

function simpleCommitJson(commit: GitCommit) {
  return {
    id: commit.sha,
    tree_id: commit.tree,
    message: commit.message,
    timestamp: commit.committer.date,
    author: { name: commit.author.name, email: commit.author.email },
    committer: { name: commit.committer.name, email: commit.committer.email },
  };
}

export function workflowRunJson(
  base: string,
  repo: StandInRepo,
  run: StandInWorkflowRun,
  headCommit: GitCommit,
  pulls: PullHead[],
) {
  const api = `${base}/api/v3/repos/${repo.owner}/${repo.name}`;
  const url = `${api}/actions/runs/${run.id}`;
  return {
    id: run.id,
    node_id: `WFR_${run.id}`,
    name: run.name,
    display_title: headCommit.message.split("\n")[0] ?? "",
    path: run.path,
    head_branch: run.headBranch,
    head_sha: run.headSha,
    run_number: run.runNumber,
    run_attempt: run.runAttempt,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: run.workflowId,
    check_suite_id: run.suiteId,
    check_suite_node_id: `CS_${run.suiteId}`,
    url,
    html_url: `${base}/${repo.owner}/${repo.name}/actions/runs/${run.id}`,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    run_started_at: run.createdAt,
    head_commit: simpleCommitJson(headCommit),
    repository: minimalRepoJson(base, repo),
    head_repository: minimalRepoJson(base, repo),
    jobs_url: `${url}/jobs`,
    logs_url: `${url}/logs`,
    check_suite_url: `${api}/check-suites/${run.suiteId}`,
    cancel_url: `${url}/cancel`,
    rerun_url: `${url}/rerun`,
    artifacts_url: `${url}/artifacts`,
    workflow_url: `${api}/actions/workflows/${run.workflowId}`,
    pull_requests: pulls
      .filter((p) => p.headSha === run.headSha || p.head === run.headBranch)
      .map((p) => pullMinimalJson(base, repo, p)),
  };
}

export function jobJson(base: string, repo: StandInRepo, run: StandInWorkflowRun, job: StandInJob) {
  const api = `${base}/api/v3/repos/${repo.owner}/${repo.name}`;
  return {
    id: job.id,
    node_id: `CR_${job.checkRunId}`,
    run_id: job.runId,
    run_url: `${api}/actions/runs/${job.runId}`,
    run_attempt: run.runAttempt,
    head_sha: run.headSha,
    head_branch: run.headBranch,
    workflow_name: run.name,
    name: job.name,
    url: `${api}/actions/jobs/${job.id}`,
    html_url: `${base}/${repo.owner}/${repo.name}/actions/runs/${job.runId}/job/${job.id}`,
    status: job.status,
    conclusion: job.conclusion,
    created_at: job.startedAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    check_run_url: `${api}/check-runs/${job.checkRunId}`,
    labels: ["ubuntu-latest"],
    runner_id: 1,
    runner_name: "GitHub Actions 1",
    runner_group_id: 2,
    runner_group_name: "GitHub Actions",
    steps: job.steps.map((step) => ({
      ...step,
      started_at: job.startedAt,
      completed_at: job.completedAt,
    })),
  };
}

/** The GitHub user a commit's email belongs to: the noreply address names one, any other none. */
function commitUser(base: string, email: string) {
  const match = /^(\d+)\+([^@]+)@users\.noreply\./.exec(email);
  if (!match) return null;
  const login = match[2] ?? "";
  return simpleUserJson(base, {
    login,
    id: Number(match[1]),
    type: login.endsWith("[bot]") ? "Bot" : "User",
  });
}

/** A commit as GitHub's commit schema has it (compare, merges). */
export function commitJson(base: string, repo: StandInRepo, commit: GitCommit) {
  const api = `${base}/api/v3/repos/${repo.owner}/${repo.name}`;
  return {
    sha: commit.sha,
    node_id: `C_${commit.sha}`,
    url: `${api}/commits/${commit.sha}`,
    html_url: `${base}/${repo.owner}/${repo.name}/commit/${commit.sha}`,
    comments_url: `${api}/commits/${commit.sha}/comments`,
    commit: {
      url: `${api}/git/commits/${commit.sha}`,
      author: commit.author,
      committer: commit.committer,
      message: commit.message,
      comment_count: 0,
      tree: { sha: commit.tree, url: `${api}/git/trees/${commit.tree}` },
    },
    author: commitUser(base, commit.author.email),
    committer: commitUser(base, commit.committer.email),
    parents: commit.parents.map((sha) => ({
      sha,
      url: `${api}/commits/${sha}`,
      html_url: `${base}/${repo.owner}/${repo.name}/commit/${sha}`,
    })),
  };
}
