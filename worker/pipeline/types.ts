/**
 * What the pipeline's steps and the GitHub side share: the status comment, the pull request draft
 * and its publisher. Types only, so the orchestrator (run.ts) and the publishing step can both
 * import them without importing each other.
 */
import type { Trajectory } from "../../src/contracts.js";
import type { LeftWork } from "../../src/github/left-work.js";
import type { TestRun } from "./baseline.js";
import type { TestProof } from "./gate.js";

/** An open pull request as the status reports it: whether a draft, and what did not work after it opened. */
export interface PublishedPullRequest {
  number: number;
  url: string;
  /** false when GitHub refused a draft in this repository. */
  draft?: boolean;
  /** false when the review request failed (the reason is in `problems`). */
  reviewRequested?: boolean;
  problems?: string[];
}

export type RunPhase = "queued" | "cloning" | "setting_up" | "baseline" | "agent" | "testing" | "publishing";

export interface ProgressInfo {
  step?: number;
  maxSteps?: number;
  /** One line for people, e.g. why a retry is coming. */
  note?: string;
}

/** The status comment on the issue, edited in place. Every run ends in exactly one final call. */
export interface StatusReporter {
  /** Rejects when the edit failed, which the reporter has logged; callers go on (progressIsBestEffort). */
  progress(phase: RunPhase, info?: ProgressInfo): Promise<void>;
  succeeded(pullRequest: PublishedPullRequest): Promise<void>;
  /** `work`: the change the agent left when it stopped on a limit, with its tests' result. */
  failed(reason: string, trajectory?: Trajectory, work?: LeftWork): Promise<void>;
  cancelled(by: string): Promise<void>;
}

export interface PullRequestDraft {
  issueNumber: number;
  testCommand: string;
  branch: string;
  base: string;
  title: string;
  trajectory: Trajectory;
  baseline: TestRun;
  proof: TestProof;
}

/** GitHub writes after the push: one draft PR per issue, the review request, the summary. */
export interface Publisher {
  openOrUpdatePullRequest(draft: PullRequestDraft): Promise<PublishedPullRequest>;
  requestReview(pullNumber: number, login: string): Promise<void>;
  postSummary(pullNumber: number, draft: PullRequestDraft): Promise<void>;
}

/** The catch of a progress update: a progress line is best effort, and the reporter logs its failure. */
export function progressIsBestEffort(): void {}
