/**
 * Webhook deliveries of a repository's CI for tests: `check_suite`, `check_run`, `status` and
 * `workflow_run`, each GitHub's own example payload (@octokit/webhooks-examples) with its subject
 * replaced by what the GitHub stand-in holds (github.ci: the same JSON its REST API answers) and this
 * repository's ids and installation. Sign and POST them with `deliver` (webhooks.ts).
 * GitHub sends `completed` check events to every app with checks: read on the repository, not only
 * to the app that made the suite.
 */

import {
  checkRunJson,
  checkSuiteJson,
  minimalRepoJson,
  type PullHead,
  simpleUserJson,
  statusJson,
  workflowRunJson,
} from "./github/ci-render.js";
import type {
  StandInCheckRun,
  StandInCheckSuite,
  StandInStatus,
  StandInWorkflowRun,
} from "./github/ci-state.js";
import { readCommit } from "./github/git-history.js";
import type { StandInRepo } from "./github/state.js";
import type { GitHubServer } from "./github-server.js";
import { type Delivery, type Example, webhookExample } from "./webhooks.js";

export function storedRepo(github: GitHubServer, owner: string, repo: string): StandInRepo {
  const stored = github.state.repo(owner, repo);
  if (!stored) throw new Error(`the stand-in has no repository ${owner}/${repo}`);
  return stored;
}

/** The example's repository, installation and sender made this repository's. */
export function envelope(github: GitHubServer, repo: StandInRepo, example: Example, sender?: string) {
  const exampleRepo = example.repository as Record<string, unknown>;
  const exampleSender = example.sender as Record<string, unknown>;
  return {
    repository: { ...exampleRepo, ...minimalRepoJson(github.url, repo) },
    installation: { id: repo.installationId, node_id: `I_${repo.installationId}` },
    sender: sender
      ? { ...exampleSender, ...simpleUserJson(github.url, { login: sender, id: 1, type: "User" }) }
      : exampleSender,
  };
}

/** Open pull requests of the repository with their head and base commits now. */
async function pullHeads(github: GitHubServer, repo: StandInRepo): Promise<PullHead[]> {
  const branches = await github.branches(repo.owner, repo.name);
  return github.state.pulls
    .filter((p) => p.owner === repo.owner && p.repo === repo.name && p.state === "open")
    .map((p) => ({
      number: p.number,
      head: p.head,
      headSha: branches[p.head] ?? "",
      base: p.base,
      baseSha: branches[p.base] ?? "",
    }));
}

/** check_suite.completed for a suite of the stand-in (its conclusion from its check runs). */
export async function checkSuiteEvent(github: GitHubServer, suite: StandInCheckSuite): Promise<Delivery> {
  const repo = storedRepo(github, suite.owner, suite.repo);
  const example = webhookExample("check_suite", "completed");
  const head = await readCommit(github.repoDir(repo.owner, repo.name), suite.headSha);
  const json = checkSuiteJson(github.url, repo, github.ci, suite, head, await pullHeads(github, repo));
  const { repository: _, ...suiteFields } = json;
  return {
    event: "check_suite",
    payload: {
      ...example,
      action: "completed",
      check_suite: { ...(example.check_suite as object), ...suiteFields },
      ...envelope(github, repo, example),
    },
  };
}

/** check_run.ACTION (completed unless told) for a check run of the stand-in. */
export async function checkRunEvent(
  github: GitHubServer,
  run: StandInCheckRun,
  action: "created" | "completed" = "completed",
): Promise<Delivery> {
  const repo = storedRepo(github, run.owner, run.repo);
  const example = webhookExample("check_run", action);
  const suite = github.ci.checkSuites.find((s) => s.id === run.suiteId);
  const pulls = await pullHeads(github, repo);
  const exampleRun = example.check_run as Record<string, unknown>;
  return {
    event: "check_run",
    payload: {
      ...example,
      action,
      check_run: {
        ...exampleRun,
        ...checkRunJson(github.url, repo, run, pulls),
        // The event carries the run's suite whole, where the REST answer has only its id.
        check_suite: {
          ...(exampleRun.check_suite as object),
          id: run.suiteId,
          head_sha: run.headSha,
          head_branch: suite?.headBranch ?? null,
          ...(suite ? github.ci.suiteResult(suite) : {}),
        },
      },
      ...envelope(github, repo, example),
    },
  };
}

/** status for a commit status of the stand-in (an event without actions), sent by its creator. */
export async function statusEvent(github: GitHubServer, status: StandInStatus): Promise<Delivery> {
  const repo = storedRepo(github, status.owner, status.repo);
  const example = webhookExample("status", undefined);
  const commit = await readCommit(github.repoDir(repo.owner, repo.name), status.sha);
  const branches = Object.entries(await github.branches(repo.owner, repo.name))
    .filter(([, sha]) => sha === status.sha)
    .map(([name, sha]) => ({
      name,
      commit: { sha, url: `${github.apiUrl}/repos/${repo.owner}/${repo.name}/commits/${sha}` },
      protected: name === repo.defaultBranch,
    }));
  const json = statusJson(github.url, repo, status);
  return {
    event: "status",
    payload: {
      ...example,
      id: status.id,
      sha: status.sha,
      name: `${repo.owner}/${repo.name}`,
      target_url: json.target_url,
      context: json.context,
      description: json.description,
      state: status.state,
      commit: {
        ...(example.commit as object),
        sha: commit.sha,
        node_id: `C_${commit.sha}`,
        commit: {
          ...((example.commit as Record<string, unknown>).commit as object),
          author: commit.author,
          committer: commit.committer,
          message: commit.message,
          tree: {
            sha: commit.tree,
            url: `${github.apiUrl}/repos/${repo.owner}/${repo.name}/git/trees/${commit.tree}`,
          },
        },
        parents: commit.parents.map((sha) => ({ sha })),
      },
      branches,
      created_at: status.createdAt,
      updated_at: status.updatedAt,
      ...envelope(github, repo, example, status.creator.login),
    },
  };
}

/** workflow_run.completed for a workflow run of the stand-in. */
export async function workflowRunEvent(github: GitHubServer, run: StandInWorkflowRun): Promise<Delivery> {
  const repo = storedRepo(github, run.owner, run.repo);
  const example = webhookExample("workflow_run", "completed", (e) => {
    const conclusion = (e.workflow_run as { conclusion?: unknown }).conclusion;
    return typeof conclusion === "string";
  });
  const head = await readCommit(github.repoDir(repo.owner, repo.name), run.headSha);
  const json = workflowRunJson(github.url, repo, run, head, await pullHeads(github, repo));
  return {
    event: "workflow_run",
    payload: {
      ...example,
      action: "completed",
      workflow_run: { ...(example.workflow_run as object), ...json, previous_attempt_url: null },
      workflow: {
        ...(example.workflow as object),
        id: run.workflowId,
        name: run.name,
        path: run.path,
        url: json.workflow_url,
      },
      organization: { ...(example.organization as object), login: repo.owner, id: repo.id + 1 },
      ...envelope(github, repo, example),
    },
  };
}
