/**
 * Pieces shared by the end-to-end tests, the demo and the pipeline benchmark: the sample repository
 * as files, signed webhooks as GitHub sends them, and waiting for an outcome on the stand-in.
 */

import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { sign } from "@octokit/webhooks-methods";

export const FIXTURES = join(import.meta.dirname, "..", "fixtures");
export const SAMPLE_REPO_DIR = join(FIXTURES, "sample-repo");
export const SAMPLE_REPLAY = join(FIXTURES, "replay", "sample-median.jsonl");
export const SAMPLE_ISSUE = {
  title: "median() is wrong for an even number of values",
  body:
    "`median([1, 2, 3, 4])` returns `3`, but the median of an even number of values is the mean of the two " +
    "middle ones, `2.5`, as the docstring of `textstats.stats.median` says.\n\nSteps to reproduce:\n\n" +
    '```\npython3 -c "from textstats import median; print(median([1, 2, 3, 4]))"\n```',
};

/** Every file under `dir` as path -> content (skipping caches), for GitHubServer.addRepo. */
export async function filesOf(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (path: string) => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (entry.name === "__pycache__" || entry.name === ".git") continue;
      const full = join(path, entry.name);
      if (entry.isDirectory()) await walk(full);
      else files[relative(dir, full)] = await readFile(full, "utf8");
    }
  };
  await walk(dir);
  return files;
}

interface WebhookTarget {
  /** Full URL of the app's webhook endpoint. */
  url: string;
  secret: string;
}

/** Posts a webhook signed like GitHub's (X-Hub-Signature-256); returns the HTTP status. */
export async function sendWebhook(
  target: WebhookTarget,
  event: string,
  payload: unknown,
  deliveryId: string = randomUUID(),
): Promise<number> {
  const body = JSON.stringify(payload);
  const response = await fetch(target.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": deliveryId,
      "x-hub-signature-256": await sign(target.secret, body),
      "user-agent": "GitHub-Hookshot/stand-in",
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

export interface IssueRef {
  owner: string;
  repo: string;
  repoId: number;
  installationId: number;
  number: number;
  title: string;
  body: string;
}

let lastEventMs = 0;

/**
 * The time of a new event, as its payload carries it (an issue's `updated_at`, a comment's
 * `created_at`): never the same twice in a process. On GitHub two events differ in such fields, and
 * the app drops a body it has already handled as a replay (src/server/handlers/deliveries.ts), so two
 * events of a test must not be the same bytes unless the test replays one.
 */
export function eventTime(): string {
  lastEventMs = Math.max(Date.now(), lastEventMs + 1);
  return new Date(lastEventMs).toISOString();
}

const user = (login: string, type: "User" | "Bot" = "User") => ({ login, id: 1000 + login.length, type });

/** An `issues.labeled` / `issues.unlabeled` payload as GitHub sends it (the fields the app reads). */
export function labelPayload(
  issue: IssueRef,
  action: "labeled" | "unlabeled",
  sender: string,
  label = "agent-fix",
) {
  return {
    action,
    label: { name: label },
    issue: {
      number: issue.number,
      title: issue.title,
      body: issue.body,
      state: "open",
      labels: action === "labeled" ? [{ name: label }] : [],
      user: user("reporter"),
      updated_at: eventTime(),
    },
    repository: {
      id: issue.repoId,
      name: issue.repo,
      full_name: `${issue.owner}/${issue.repo}`,
      owner: user(issue.owner),
      default_branch: "main",
    },
    installation: { id: issue.installationId },
    sender: user(sender),
  };
}

/** An `issue_comment.created` payload. */
export function commentPayload(issue: IssueRef, body: string, sender: string) {
  const { action: _a, label: _l, ...rest } = labelPayload(issue, "labeled", sender);
  const createdAt = eventTime();
  return {
    ...rest,
    action: "created",
    comment: { id: Date.parse(createdAt), body, user: user(sender), created_at: createdAt },
  };
}

/** Polls `read` once a second until `done` accepts its value; the last value after `tries` polls (to assert on). */
export async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, tries = 120): Promise<T> {
  let value = await read();
  for (let i = 0; i < tries && !done(value); i++) {
    await sleep(1_000);
    value = await read();
  }
  return value;
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 120_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** What a spawned process (a worker) has written to stdout and stderr so far, read when asked. */
export function childOutput(child: ChildProcess): () => string {
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return () => text;
}
