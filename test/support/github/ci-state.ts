/**
 * What the GitHub stand-in knows of a repository's CI: check suites and check runs (with their
 * annotations), commit statuses, GitHub Actions workflow runs and their jobs (with their logs). Tests
 * seed them as the repository's CI would produce them (`github.ci.addCheckRun`, `addStatus`,
 * `addWorkflowRun`); the app creates its own check runs through the REST API (github/check-routes.ts).
 * Heads are commit SHAs of the stand-in's git server: a branch given to a seed is resolved there.
 */
import { listRefs } from "../git-server.js";
import { resolveCommit } from "./git-history.js";
import type { StandInState } from "./state.js";

export type CheckStatus = "queued" | "in_progress" | "completed";
export type CheckConclusion =
  | "success"
  | "failure"
  | "neutral"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "action_required";
export type CommitState = "error" | "failure" | "pending" | "success";

/** A GitHub App as check runs and suites name it. */
export interface StandInApp {
  id: number;
  slug: string;
  name: string;
}

/** GitHub Actions, the app behind workflow runs' check suites and runs (its id on github.com). */
export const GITHUB_ACTIONS: StandInApp = { id: 15368, slug: "github-actions", name: "GitHub Actions" };

export interface StandInAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: "notice" | "warning" | "failure";
  message: string;
  title?: string;
  raw_details?: string;
  start_column?: number;
  end_column?: number;
}

export interface StandInCheckRun {
  id: number;
  owner: string;
  repo: string;
  headSha: string;
  name: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  startedAt: string;
  completedAt: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  annotations: StandInAnnotation[];
  detailsUrl: string | null;
  externalId: string;
  suiteId: number;
  app: StandInApp;
}

export interface StandInCheckSuite {
  id: number;
  owner: string;
  repo: string;
  headSha: string;
  headBranch: string | null;
  app: StandInApp;
  createdAt: string;
  updatedAt: string;
}

export interface StandInStatus {
  id: number;
  owner: string;
  repo: string;
  sha: string;
  state: CommitState;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: { login: string; id: number; type: "User" | "Bot" };
  createdAt: string;
  updatedAt: string;
}

export interface StandInWorkflowRun {
  id: number;
  owner: string;
  repo: string;
  /** The workflow's name, e.g. "CI", and its file. */
  name: string;
  path: string;
  workflowId: number;
  headBranch: string;
  headSha: string;
  event: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  runNumber: number;
  runAttempt: number;
  suiteId: number;
  createdAt: string;
  updatedAt: string;
}

export interface StandInStep {
  name: string;
  number: number;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
}

/**
 * Where a job's log is: kept (downloadable), deleted (someone deleted the run's logs: 404), or past
 * the repository's retention (GitHub answers 410 Gone for those).
 */
export type LogRetention = "kept" | "deleted" | "expired";

export interface StandInJob {
  id: number;
  runId: number;
  owner: string;
  repo: string;
  name: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  steps: StandInStep[];
  /** The job's log as GitHub serves it: plain text, one timestamped line per output line. */
  log: string;
  logs: LogRetention;
  checkRunId: number;
  startedAt: string;
  completedAt: string | null;
}

interface HeadOption {
  /** A branch of the stand-in's git server, resolved to its head commit now; or `sha`. */
  branch?: string;
  sha?: string;
}

interface CheckRunSeed extends HeadOption {
  name: string;
  status?: CheckStatus;
  conclusion?: CheckConclusion | null;
  output?: { title?: string; summary?: string; text?: string };
  annotations?: StandInAnnotation[];
  detailsUrl?: string;
  /** The app that reports it; GitHub Actions when absent. */
  app?: StandInApp;
}

interface StatusSeed {
  state: CommitState;
  context?: string;
  description?: string;
  targetUrl?: string;
  creator?: string;
}

interface JobSeed {
  name: string;
  conclusion?: CheckConclusion | null;
  /** Steps with their conclusions; the job's when absent. */
  steps?: { name: string; conclusion?: CheckConclusion | null }[];
  /** Lines of output, without timestamps (the stand-in adds them as GitHub's runner does). */
  log?: string;
  logs?: LogRetention;
  /** The annotations the job's check run carries (a failing step's error, a problem matcher's). */
  annotations?: StandInAnnotation[];
}

interface WorkflowRunSeed extends HeadOption {
  /** The workflow's name ("CI") and file (".github/workflows/ci.yml"). */
  name?: string;
  path?: string;
  event?: string;
  /** completed unless told; its conclusion is its jobs' (failure when one failed). */
  status?: CheckStatus;
  jobs: JobSeed[];
}

const now = () => new Date().toISOString();

/** The worst of some conclusions, as GitHub rolls check runs up into their suite. */
export function rollUp(conclusions: (CheckConclusion | null)[]): CheckConclusion | null {
  if (conclusions.some((c) => c === null)) return null;
  const order: CheckConclusion[] = ["action_required", "cancelled", "timed_out", "failure", "neutral"];
  return order.find((c) => conclusions.includes(c)) ?? (conclusions.length ? "success" : null);
}

export class CiState {
  readonly checkRuns: StandInCheckRun[] = [];
  readonly checkSuites: StandInCheckSuite[] = [];
  readonly statuses: StandInStatus[] = [];
  readonly workflowRuns: StandInWorkflowRun[] = [];
  readonly jobs: StandInJob[] = [];
  /** Download URLs of job logs handed out (signature -> job), each for a minute. */
  readonly logLinks = new Map<string, { jobId: number; expiresAt: number }>();

  constructor(
    private readonly state: StandInState,
    /** The bare repository of owner/repo on the git server. */
    readonly repoDir: (owner: string, repo: string) => string,
  ) {}

  /** The commit `ref` (branch, tag or SHA) names in the repository, or null when it names none. */
  resolve(owner: string, repo: string, ref: string): Promise<string | null> {
    return resolveCommit(this.repoDir(owner, repo), ref);
  }

  /**
   * The branch whose head `sha` is, as GitHub names a suite's head_branch: another than the default
   * branch when several are there; null when none is.
   */
  async branchAt(owner: string, repo: string, sha: string): Promise<string | null> {
    const refs = await listRefs(this.repoDir(owner, repo));
    const here = Object.entries(refs)
      .filter(([ref, at]) => ref.startsWith("refs/heads/") && at === sha)
      .map(([ref]) => ref.slice("refs/heads/".length));
    const defaultBranch = this.state.repo(owner, repo)?.defaultBranch;
    return here.find((b) => b !== defaultBranch) ?? here[0] ?? null;
  }

  /** The suite of `app` for `headSha`, created when it has none (GitHub makes one per app and commit). */
  suiteFor(owner: string, repo: string, app: StandInApp, headSha: string, headBranch: string | null) {
    const found = this.checkSuites.find(
      (s) => s.owner === owner && s.repo === repo && s.app.id === app.id && s.headSha === headSha,
    );
    if (found) return found;
    const at = now();
    const suite = {
      id: this.state.id(),
      owner,
      repo,
      headSha,
      headBranch,
      app,
      createdAt: at,
      updatedAt: at,
    };
    this.checkSuites.push(suite);
    return suite;
  }

  /** A suite's status and conclusion, from its check runs. */
  suiteResult(suite: StandInCheckSuite): { status: CheckStatus; conclusion: CheckConclusion | null } {
    const runs = this.checkRuns.filter((r) => r.suiteId === suite.id);
    if (runs.length === 0) return { status: "queued", conclusion: null };
    if (runs.some((r) => r.status !== "completed"))
      return {
        status: runs.some((r) => r.status === "in_progress") ? "in_progress" : "queued",
        conclusion: null,
      };
    return { status: "completed", conclusion: rollUp(runs.map((r) => r.conclusion)) };
  }

  /** A check run the repository's CI reports (GitHub Actions unless `app` says otherwise). */
  async addCheckRun(owner: string, repo: string, seed: CheckRunSeed): Promise<StandInCheckRun> {
    const { sha, branch } = await this.head(owner, repo, seed);
    const app = seed.app ?? GITHUB_ACTIONS;
    const suite = this.suiteFor(owner, repo, app, sha, branch);
    const conclusion = seed.conclusion ?? null;
    const status = seed.status ?? (conclusion === null ? "in_progress" : "completed");
    const at = now();
    const checkRun: StandInCheckRun = {
      id: this.state.id(),
      owner,
      repo,
      headSha: sha,
      name: seed.name,
      status,
      conclusion: status === "completed" ? conclusion : null,
      startedAt: at,
      completedAt: status === "completed" ? at : null,
      output: {
        title: seed.output?.title ?? null,
        summary: seed.output?.summary ?? null,
        text: seed.output?.text ?? null,
      },
      annotations: seed.annotations ?? [],
      detailsUrl: seed.detailsUrl ?? null,
      externalId: "",
      suiteId: suite.id,
      app,
    };
    this.checkRuns.push(checkRun);
    suite.updatedAt = at;
    return checkRun;
  }

  /** A commit status another service sets (a CI outside GitHub Actions), by `creator` ("ci-bot"). */
  async addStatus(owner: string, repo: string, head: HeadOption, seed: StatusSeed): Promise<StandInStatus> {
    const { sha } = await this.head(owner, repo, head);
    const at = now();
    const status: StandInStatus = {
      id: this.state.id(),
      owner,
      repo,
      sha,
      state: seed.state,
      context: seed.context ?? "default",
      description: seed.description ?? null,
      targetUrl: seed.targetUrl ?? null,
      creator: { login: seed.creator ?? "ci-bot", id: 77_000, type: "User" },
      createdAt: at,
      updatedAt: at,
    };
    this.statuses.push(status);
    return status;
  }

  /**
   * A GitHub Actions workflow run on a commit, as Actions records one: a check suite of GitHub Actions,
   * one check run per job (named after the job, with its annotations), and the jobs with their logs.
   */
  async addWorkflowRun(
    owner: string,
    repo: string,
    seed: WorkflowRunSeed,
  ): Promise<{ run: StandInWorkflowRun; jobs: StandInJob[] }> {
    const { sha, branch } = await this.head(owner, repo, seed);
    const suite = this.suiteFor(owner, repo, GITHUB_ACTIONS, sha, branch);
    const status = seed.status ?? "completed";
    const path = seed.path ?? ".github/workflows/ci.yml";
    const at = now();
    const workflowRun: StandInWorkflowRun = {
      id: this.state.id(),
      owner,
      repo,
      name: seed.name ?? "CI",
      path,
      // One id per workflow file, the same for every run of it, as GitHub's workflow ids are.
      workflowId: 161_000 + [...path].reduce((sum, c) => sum + c.charCodeAt(0), 0),
      headBranch: branch ?? "",
      headSha: sha,
      event: seed.event ?? "pull_request",
      status,
      conclusion: null,
      runNumber: this.workflowRuns.filter((r) => r.owner === owner && r.repo === repo).length + 1,
      runAttempt: 1,
      suiteId: suite.id,
      createdAt: at,
      updatedAt: at,
    };
    const jobs: StandInJob[] = [];
    for (const job of seed.jobs) {
      const conclusion = status === "completed" ? (job.conclusion ?? "success") : null;
      const checkRun = await this.addCheckRun(owner, repo, {
        sha,
        name: job.name,
        status,
        conclusion,
        ...(job.annotations ? { annotations: job.annotations } : {}),
        output: { title: conclusion === "failure" ? `${job.name} failed` : job.name, summary: "" },
      });
      const steps = (job.steps ?? [{ name: "Run tests", conclusion }]).map((step, index) => ({
        name: step.name,
        number: index + 1,
        status,
        conclusion: status === "completed" ? (step.conclusion ?? conclusion) : null,
      }));
      const stored: StandInJob = {
        id: this.state.id(),
        runId: workflowRun.id,
        owner,
        repo,
        name: job.name,
        status,
        conclusion,
        steps,
        log: runnerLog(job.log ?? "", at),
        logs: job.logs ?? "kept",
        checkRunId: checkRun.id,
        startedAt: at,
        completedAt: status === "completed" ? at : null,
      };
      this.jobs.push(stored);
      jobs.push(stored);
    }
    workflowRun.conclusion = status === "completed" ? rollUp(jobs.map((j) => j.conclusion)) : null;
    this.workflowRuns.push(workflowRun);
    return { run: workflowRun, jobs };
  }

  private async head(owner: string, repo: string, head: HeadOption) {
    if (!this.state.repo(owner, repo)) throw new Error(`the stand-in has no repository ${owner}/${repo}`);
    const ref = head.sha ?? head.branch;
    if (!ref) throw new Error("a CI seed needs the commit it ran on: give `branch` or `sha`");
    const sha = await this.resolve(owner, repo, ref);
    if (!sha) throw new Error(`${owner}/${repo} has no commit ${ref} on the stand-in's git server`);
    return { sha, branch: head.branch ?? (await this.branchAt(owner, repo, sha)) };
  }
}

/**
 * Output lines as a GitHub-hosted runner writes them: each prefixed with its timestamp, ISO 8601 with
 * seven fractional digits (2024-01-01T00:00:00.1230000Z), which a log reader strips.
 */
function runnerLog(text: string, at: string): string {
  if (text === "") return "";
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return `${lines.map((line) => `${at.replace("Z", "0000Z")} ${line}`).join("\n")}\n`;
}
