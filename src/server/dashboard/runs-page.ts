/** The dashboard's list of runs and its sign-in page. */
import type { RunSummary } from "../../shared/trajectory-store.js";
import { type Html, html } from "./html.js";

function duration(run: RunSummary): string {
  if (!run.finishedAt) return "running";
  const seconds = Math.round((Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000);
  return seconds >= 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds} s`;
}

/** One page of the list, newest first. */
export interface RunsPage {
  runs: RunSummary[];
  /** The last run of this page when older runs follow: the next page starts after it. */
  older: string | null;
  /** Whether this is the newest page. */
  first: boolean;
}

export function renderRunsList(prefix: string, page: RunsPage, operator: boolean): Html {
  const { runs } = page;
  const rows = runs.map(
    (
      run,
    ) => html`<tr><td><a href="${prefix}/runs/${encodeURIComponent(run.name)}">${run.repo}#${run.issue}</a></td>
<td><code>${run.outcome}</code></td><td>$${run.costUsd.toFixed(4)}</td><td>${duration(run)}</td>
<td>${run.steps}</td><td>${run.trigger ?? ""}</td><td>${run.startedAt}</td></tr>`,
  );
  const table = runs.length
    ? html`<table id="runs"><thead><tr><th>Repository and issue</th><th>Outcome</th><th>Cost</th><th>Duration</th><th>Steps</th><th>Trigger</th><th>Started</th></tr></thead><tbody>${rows}</tbody></table>`
    : page.first
      ? html`<p>No runs stored yet (runs are kept for the retention period, AGENT_FIX_TRAJECTORY_RETENTION_DAYS).</p>`
      : html`<p>No older runs (runs are kept for the retention period, AGENT_FIX_TRAJECTORY_RETENTION_DAYS).</p>`;
  const queue = operator ? html`<p><a href="${prefix}/queue">The queue (Bull Board)</a></p>` : "";
  const newest = page.first ? "" : html`<a class="newest" href="${prefix}/">Newest runs</a> `;
  const older = page.older
    ? html`<a class="older" href="${prefix}/?after=${encodeURIComponent(page.older)}">Older runs</a>`
    : "";
  const pager = newest || older ? html`<p class="pager">${newest}${older}</p>` : "";
  return html`<h1>Runs</h1>${queue}${table}${pager}`;
}

/** The sign-in methods the operator configured. */
export interface SignInMethods {
  secret: boolean;
  github: boolean;
}

export function renderSignIn(prefix: string, methods: SignInMethods, wrong: boolean): Html {
  const github = methods.github
    ? html`<p><a class="github" href="${prefix}/login">Sign in with GitHub</a> (you see the runs of the repositories you can read)</p>`
    : "";
  const form = methods.secret
    ? html`${wrong ? html`<p class="failed">That is not the dashboard secret.</p>` : ""}
<form method="post" action="${prefix}/login"><label>Dashboard secret (AGENT_FIX_DASHBOARD_SECRET)
<input type="password" name="secret" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`
    : "";
  return html`<h1>Sign in</h1>${github}${form}`;
}

export function navigation(prefix: string, viewer: { login: string | null; operator: boolean }): Html {
  const queue = viewer.operator ? html`<a href="${prefix}/queue">Queue</a>` : "";
  const who = viewer.login ? html`<span class="viewer">${viewer.login}</span>` : "";
  return html`<a href="${prefix}/">Runs</a>${queue}${who}
<form method="post" action="${prefix}/logout"><button type="submit">Sign out</button></form>`;
}
