/**
 * A CI round, the fix run's sibling: the repository's checks failed on the head commit of the app's pull
 * request. In the order it happens:
 *   1. the pull request is still the app's own and open (as for a review round), and its branch
 *   2. the failing checks, read with a checks/statuses/actions reader; those that fail on the base
 *      branch too are named once and not chased; when nothing is left the round ends here
 *   3. rounds left: the operator's `ci.maxRounds`, lowered by the repository's; once used up the app
 *      says so once on the pull request, and the round ends with nothing run
 *   4. every run on the pull request together under the operator's cost ceiling (said once when not)
 *   5. a comment on the pull request that the round started (it is what later rounds count)
 *   6. `runFix` with the issue plus the failing checks as the task: the same gate, a new commit on the
 *      same branch (no force), and a reply naming the checks (open/ci-task.ts `ciPublisher`)
 * Each round is held to the run's cost ceiling like any run.
 */
import { parse } from "yaml";
import { REPO_CONFIG_PATH } from "../config/repo.js";
import type { RunOutcome } from "../run-end.js";
import { readContents } from "./configure/contents.js";
import {
  CI_ROUND_MARK,
  CI_USED_UP_MARK,
  checkList,
  ciBaseMark,
  ciPublisher,
  ciTaskBody,
  readCiFailure,
} from "./open/ci-task.js";
import type { OpenRun } from "./open/open-run.js";
import { pullCostRefusal } from "./open/pull-cost-ceiling.js";
import { loadReviewRun } from "./open/review-task.js";
import { type Issue, keptOnFailure, publisherLinks } from "./open/task.js";
import { runFix } from "./run-fix.js";

export async function ciRound(run: OpenRun, issue: Issue): Promise<RunOutcome> {
  const job = run.job.data;
  const appLogin = run.parts.identity.name;
  const { existingBranch } = await loadReviewRun(
    run.octokit,
    job,
    { number: issue.number, title: issue.title, body: issue.body },
    appLogin,
  );
  const pullNumber = job.pullNumber!; // loadReviewRun refuses a job without one
  const repo = { owner: job.owner, repo: job.repo };
  const { data: pull } = await run.octokit.rest.pulls.get({ ...repo, pull_number: pullNumber });
  const comments = await run.octokit.paginate(run.octokit.rest.issues.listComments, {
    ...repo,
    issue_number: pullNumber,
    per_page: 100,
  });
  const ours = comments.filter((c) => c.user?.login === appLogin).map((c) => c.body ?? "");
  const comment = (body: string) =>
    run.octokit.rest.issues.createComment({ ...repo, issue_number: pullNumber, body });

  const input = await readCiFailure(
    await run.credentials.ciReader(),
    job,
    pull.base.ref,
    appLogin.replace(/\[bot\]$/, ""),
  );
  const links = run.parts.links;
  const newOnBase = input.alsoOnBase.filter((name) => !ours.some((body) => body.includes(ciBaseMark(name))));
  const baseNote =
    newOnBase.length > 0
      ? `${newOnBase.map(ciBaseMark).join("")}\n${checkList(newOnBase, links)} ${newOnBase.length === 1 ? "fails" : "fail"} on \`${input.baseBranch}\` too, so agent-fix does not chase ${newOnBase.length === 1 ? "it" : "them"} on this pull request.`
      : "";
  // Nothing of this pull request's to fix: no round is used.
  if (input.toFix.length === 0) {
    if (baseNote) await comment(baseNote);
    return await endHere(
      run,
      input.alsoOnBase.length > 0
        ? `The checks failing on pull request #${pullNumber} fail on ${input.baseBranch} too: nothing for agent-fix to fix there.`
        : `No failing check of pull request #${pullNumber} was left to look at.`,
    );
  }

  const limit = Math.min(run.parts.agent.operator.ci.maxRounds, await repositoryLimit(run, issue));
  // Rounds of other commits: this commit's own, posted by an earlier attempt of this job (a retry or a
  // hand-back), is this round, not one more.
  const thisCommit = `<!-- ${input.headSha} -->`;
  const rounds = ours.filter((body) => body.startsWith(CI_ROUND_MARK));
  const started = rounds.some((body) => body.includes(thisCommit));
  const used = rounds.filter((body) => !body.includes(thisCommit)).length;
  if (used >= limit) {
    const usedUp = ours.some((body) => body.startsWith(CI_USED_UP_MARK))
      ? []
      : [
          `${CI_USED_UP_MARK}\n${
            limit === 0
              ? "The checks fail on this pull request, and agent-fix takes no CI rounds here (`ci.maxRounds` is 0)."
              : `The checks fail on this pull request again, and agent-fix has used the ${limit} CI round(s) it may take on it (\`ci.maxRounds\`), so it starts no more.`
          } Someone has to look at the failures; a review or \`/agent-fix\` with a request here still starts a round.`,
        ];
    const said = [...usedUp, ...(baseNote ? [baseNote] : [])];
    if (said.length > 0) await comment(said.join("\n\n"));
    return await endHere(
      run,
      `The CI rounds on pull request #${pullNumber} are used up (${used} of ${limit}).`,
    );
  }
  const refused = await pullCostRefusal(run, pullNumber, "CI");
  if (refused) return refused;
  const names = input.toFix.map((c) => c.name);
  if (!started)
    await comment(
      [
        `${CI_ROUND_MARK}${thisCommit}\nagent-fix is working on the failing ${checkList(names, links)} (CI round ${used + 1} of ${limit}); it will push a new commit to \`${existingBranch}\`. Progress is shown on #${issue.number}.`,
        ...(baseNote ? ["", baseNote] : []),
      ].join("\n"),
    );
  const publisher = ciPublisher(
    run.octokit,
    job,
    { toFix: names, alsoOnBase: input.alsoOnBase, baseBranch: input.baseBranch },
    publisherLinks(run),
  );
  return runFix(run, issue, {
    issue,
    ask: { number: issue.number, title: issue.title, body: ciTaskBody(issue.body ?? "", pullNumber, input) },
    existingBranch,
    commitTitle: `Fix the failing checks on #${pullNumber}`,
    publisher: keptOnFailure(run, publisher),
    pullRequestTemplate: false,
  });
}

/**
 * The repository's `ci.maxRounds` from its .github/agent-fix.yml (default branch), or the ceiling when
 * it sets none. The file is checked whole by the run's configure step; here only this key is read.
 */
async function repositoryLimit(run: OpenRun, issue: Issue): Promise<number> {
  const read = await readContents(
    await run.credentials.contentsReader(),
    { owner: run.job.data.owner, repo: run.job.data.repo, ref: issue.repository.defaultBranch },
    REPO_CONFIG_PATH,
    256 * 1024,
  );
  if (read.kind !== "file") return Number.POSITIVE_INFINITY;
  let data: unknown;
  try {
    data = parse(read.text);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  const rounds = (data as { ci?: { maxRounds?: unknown } } | null)?.ci?.maxRounds;
  return typeof rounds === "number" && Number.isInteger(rounds) && rounds >= 0
    ? rounds
    : Number.POSITIVE_INFINITY;
}

/** A round that runs nothing: the status comment says why; no clone, sandbox or model. */
async function endHere(run: OpenRun, reason: string): Promise<RunOutcome> {
  run.log.info({ reason }, "CI round: nothing to run");
  await run.status.failed(reason);
  return { kind: "no_pull_request", reason, trajectory: null, timings: {} };
}
