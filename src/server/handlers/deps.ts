/** What every handler receives: the queue and the app's settings. Handlers only filter and enqueue. */

import type { Queue } from "bullmq";
import type { Logger } from "probot";
import type { GitHubApi } from "../../shared/github/api.js";
import type { BaseMove } from "../../shared/queue/base-moves.js";
import type { FixQueue } from "../../shared/queue/fix-queue.js";

export interface HandlerSettings {
  /** The label that starts a run (AGENT_FIX_LABEL). */
  label: string;
  /** The comment command (AGENT_FIX_COMMAND), e.g. `/agent-fix`; `<command> stop` cancels. */
  command: string;
  /** Base URL where the app serves trajectories (PUBLIC_URL). */
  publicUrl?: string | undefined;
  /** Bot logins whose label starts a run (AGENT_FIX_LABEL_BOTS); other bots' labels are ignored. */
  labelBots?: readonly string[];
}

export interface HandlerDeps {
  queue: FixQueue;
  /** Looks at the app's pull requests after their base branch moved (a `push`), taken by the workers. */
  baseMoves: Queue<BaseMove>;
  settings: HandlerSettings;
  /** The app's bot login, `SLUG[bot]` (read once as the app): the author of its own pull requests. */
  appLogin(): Promise<string>;
  /** The newest stored run of an issue: its cost so far and its page (`/agent-fix status`); null: none. */
  runOf?(repoId: number, issueNumber: number): Promise<{ costUsd: number; url?: string } | null>;
}

/** The parts of a Probot context the shared start/cancel logic needs. */
export interface EventContext {
  /** X-GitHub-Delivery. */
  id: string;
  octokit: GitHubApi;
  log: Logger;
}

export interface IssueTarget {
  installationId: number;
  /** The repository owner's id: the installation's account, whose Marketplace plan applies. */
  accountId?: number;
  owner: string;
  repo: string;
  repoId: number;
  issueNumber: number;
}

interface PayloadWithRepo {
  installation?: { id: number };
  repository: { id: number; name: string; owner: { login: string; id?: number } };
}

/** Ids of the issue an event is about; null when the event has no installation (not for this app). */
export function targetOf(payload: PayloadWithRepo, issueNumber: number): IssueTarget | null {
  if (!payload.installation) return null;
  return {
    installationId: payload.installation.id,
    ...(payload.repository.owner.id ? { accountId: payload.repository.owner.id } : {}),
    owner: payload.repository.owner.login,
    repo: payload.repository.name,
    repoId: payload.repository.id,
    issueNumber,
  };
}

/** Events caused by bots, the app itself included, are ignored. */
export function fromBot(sender: { type?: string; login?: string } | undefined): boolean {
  return sender?.type === "Bot" || (sender?.login ?? "").endsWith("[bot]");
}
