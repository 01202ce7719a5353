/**
 * The app's own check run, "agent-fix / tests", on the commit the run pushed: in progress while the change
 * is published, completed once it is (success), or with the reason when the run fails after the push. A
 * reviewer sees the gate in the Checks tab beside the repository's own checks, and a required-check rule
 * can use it. GitHub keys check runs by commit, so each commit the app pushes (a review round's too) gets
 * its own. Written with a token that may only write checks: an installation that never granted
 * `checks: write` refuses it, and that refusal is named in the final status; it never fails the run.
 * Whatever ends the run otherwise (a cancel, a failure for good, its worker dying) completes it too
 * (left-check-runs.ts): GitHub leaves a check run in progress until its app completes it.
 */
import { httpStatus } from "../../../src/shared/github/api.js";
import { GITHUB_COM_LINKS, type LinkPolicy } from "../../../src/shared/github/inert-links.js";
import { fitComment } from "../../../src/shared/github/limits.js";
import { neutralise } from "../../../src/shared/github/neutralise.js";
import { githubMessage } from "../../github/pull-request.js";
import type { Logger } from "../../log.js";
import type { OpenRun } from "../open/open-run.js";
import type { Issue } from "../open/task.js";
import { baselineTestsPassed, proofFailed } from "../tests/per-test-verdict.js";
import type { TestRun } from "../tests/test-run.js";
import type { PullRequestDraft } from "./github-publisher.js";
import { CHECK_RUN_NAME } from "./left-check-runs.js";

export { CHECK_RUN_NAME };

/** Test names listed in the summary; the rest are counted. */
const MAX_LISTED = 20;
/** GitHub's limit on a check run's output summary. */
const SUMMARY_LIMIT = 65_535;

type Conclusion = "success" | "failure";

/** The check run on the pushed commit, completed once by the publish step. */
export interface CheckRun {
  /** Completes it; resolves to the problem to name in the final status, or null. Never rejects. */
  complete(conclusion: Conclusion, reason?: string): Promise<string | null>;
}

/** The part of Octokit the check run uses (checks/create and checks/update). */
export interface ChecksApi {
  rest: {
    checks: {
      create(params: CreateParams): Promise<{ data: { id: number } }>;
      update(params: Omit<CreateParams, "head_sha" | "name"> & { check_run_id: number }): Promise<unknown>;
    };
  };
}

// A type, not an interface: Octokit's parameters need an index signature, which only types get implicitly.
type CreateParams = {
  owner: string;
  repo: string;
  name: string;
  head_sha: string;
  status?: "in_progress" | "completed";
  conclusion?: Conclusion;
  details_url?: string;
  external_id?: string;
  output?: { title: string; summary: string };
};

interface CheckRunInput {
  repo: { owner: string; repo: string };
  headSha: string;
  draft: PullRequestDraft;
  /** The run's page (its signed trajectory link), when the app serves it. */
  detailsUrl?: string | undefined;
  /** Hosts the text may link to. */
  links?: LinkPolicy | undefined;
  /** Values never to show (the repository's setup secrets). */
  secrets?: Record<string, string> | undefined;
  logger?: Logger | undefined;
}

/** The check run step of `run`: created in progress on `headSha`, the commit the run pushed. */
export async function startCheckRun(
  run: OpenRun,
  issue: Pick<Issue, "setupSecrets">,
  headSha: string,
  draft: PullRequestDraft,
  /** Its client, when the run minted it ahead (while pushing); else minted now. */
  writer: ReturnType<OpenRun["credentials"]["checksWriter"]> = run.credentials.checksWriter(),
): Promise<CheckRun> {
  const api = await writer.catch((error: unknown) => error as Error);
  const input: CheckRunInput = {
    repo: { owner: run.job.data.owner, repo: run.job.data.repo },
    headSha,
    draft,
    detailsUrl: run.parts.trajectoryLinks(run.name).trajectoryUrl,
    links: run.parts.links,
    secrets: issue.setupSecrets,
    logger: run.log,
  };
  if (api instanceof Error) return refusedCheckRun(api, run.log);
  // Marked before GitHub is asked: should this worker die with the request on its way, whoever ends
  // the job still finds the check run and completes it (left-check-runs.ts).
  const marks = run.parts.leftCheckRuns;
  const { installationId, repoId } = run.job.data;
  const place = { installationId, repoId, ...input.repo, headSha };
  const unmarked = (err: unknown) => run.log.warn({ err }, "the check run's mark could not be written");
  await marks?.mark(run.job.id, place).catch(unmarked);
  const check = await createCheckRun(api, input);
  return {
    async complete(conclusion, reason) {
      const problem = await check.complete(conclusion, reason);
      await marks?.clear(run.job.id).catch(unmarked);
      return problem;
    },
  };
}

/**
 * The check run step of a later attempt that pushed (or found pushed) the change an earlier one kept:
 * on the head of the change's branch as GitHub has it now, read with a token that may only read contents.
 */
export async function startCheckRunOnBranch(
  run: OpenRun,
  issue: Pick<Issue, "setupSecrets">,
  draft: PullRequestDraft,
): Promise<CheckRun> {
  const head = await run.credentials
    .contentsReader()
    .then((reader) =>
      reader.rest.repos.getBranch({
        owner: run.job.data.owner,
        repo: run.job.data.repo,
        branch: draft.branch,
      }),
    )
    .then(({ data }) => data.commit.sha)
    .catch((error: unknown) => error as Error);
  if (head instanceof Error) return refusedCheckRun(head, run.log);
  return startCheckRun(run, issue, head, draft);
}

/** Creates the check run in progress; a refusal gives a check run that only names it. */
export async function createCheckRun(api: ChecksApi, input: CheckRunInput): Promise<CheckRun> {
  const { repo, headSha } = input;
  const output = checkRunOutput(input.draft, input.links ?? GITHUB_COM_LINKS, input.secrets ?? {});
  const created = await api.rest.checks
    .create({
      ...repo,
      name: CHECK_RUN_NAME,
      head_sha: headSha,
      status: "in_progress",
      ...(input.detailsUrl ? { details_url: input.detailsUrl } : {}),
      output: { title: "Publishing the tested change", summary: output.summary },
    })
    .catch((error: unknown) => error as Error);
  if (created instanceof Error) return refusedCheckRun(created, input.logger);
  const id = created.data.id;
  return {
    async complete(conclusion, reason) {
      const text =
        conclusion === "success"
          ? output
          : {
              title: "The run failed after pushing this commit",
              summary: `${clean(reason ?? "unknown reason", input)}\n\n${output.summary}`,
            };
      try {
        await api.rest.checks.update({
          ...repo,
          check_run_id: id,
          status: "completed",
          conclusion,
          output: { title: text.title, summary: fitComment(text.summary, SUMMARY_LIMIT) },
        });
        return null;
      } catch (error) {
        input.logger?.warn({ err: error }, "the check run could not be completed");
        return `The check run "${CHECK_RUN_NAME}" could not be completed: ${githubMessage(error)}`;
      }
    },
  };
}

/** No check run: GitHub refused it (most often an installation without `checks: write`). */
function refusedCheckRun(error: Error, logger?: Logger): CheckRun {
  logger?.warn({ err: error }, "the check run could not be created");
  // 403 on the request, or 422 minting a token with a permission the installation was never granted.
  // The mint's error wraps GitHub's answer: its words are the cause's.
  const answer = "response" in error ? error : ((error as { cause?: unknown }).cause ?? error);
  const status = httpStatus(answer);
  const refusal = status === 403 || status === 422;
  const problem =
    `The check run "${CHECK_RUN_NAME}" could not be created: ${githubMessage(answer).replace(/\s+/g, " ").trim()}` +
    (refusal
      ? " (an owner of the installation can accept the app's request for the checks: write permission in its settings)"
      : "");
  return { complete: async () => problem };
}

/** Text from the repository or the model, with no live mention, closing keyword, or setup secret. */
function clean(text: string, input: Pick<CheckRunInput, "links" | "secrets">): string {
  let safe = text;
  for (const value of Object.values(input.secrets ?? {}))
    if (value.length >= 4) safe = safe.replaceAll(value, "[secret]");
  return neutralise(safe, input.links ?? GITHUB_COM_LINKS);
}

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

function listed(tests: readonly string[]): string {
  const shown = tests.slice(0, MAX_LISTED).map(code).join(", ");
  return tests.length > MAX_LISTED ? `${shown} and ${tests.length - MAX_LISTED} more` : shown;
}

/** The baseline as the summary tells it: passed or failed, per test where the runner reported them. */
function baselineLines(baseline: TestRun): string[] {
  const verdict = baseline.timedOut
    ? "timed out"
    : baselineTestsPassed(baseline)
      ? "passed"
      : `failed (exit code ${baseline.exitCode})`;
  const lines = [`- **Before the change** (the base commit): ${verdict}`];
  if (baseline.results) {
    const tests = [...baseline.results.tests];
    const failing = tests.filter(([, outcome]) => outcome !== "passed").map(([id]) => id);
    lines.push(`  - ${tests.length - failing.length} of ${tests.length} tests passed`);
    if (failing.length > 0) lines.push(`  - failing: ${listed(failing)}`);
  }
  return lines;
}

/** The title and summary of the completed check run: the baseline, the result on the change, the proof. */
function checkRunOutput(
  draft: PullRequestDraft,
  links: LinkPolicy = GITHUB_COM_LINKS,
  secrets: Record<string, string> = {},
): { title: string; summary: string } {
  const { baseline, proof } = draft;
  const attempts = draft.trajectory.info.gate.length;
  const before = baselineTestsPassed(baseline) ? "passed before" : "failed before";
  const lines = [
    `Test command: ${code(draft.testCommand)}`,
    "",
    ...baselineLines(baseline),
    `- **With the change**: passed${attempts > 1 ? ` (at the agent's attempt ${attempts})` : ""}`,
  ];
  let proved = "";
  if (proof.before) {
    const failedWithout = proofFailed(baseline, proof.before);
    proved = failedWithout ? "; the new tests fail without the fix" : "";
    lines.push(
      `- **Proof**: the changed test files (${listed(proof.testFiles)}), applied alone to the base commit, ` +
        (failedWithout
          ? "fail; with the whole change they pass (fail before, pass after)"
          : "pass: they do not show the bug without the fix"),
    );
  } else {
    lines.push("- **Proof**: the change adds or modifies no test file");
  }
  return {
    title: clean(`Tests pass with the change (they ${before}${proved})`, { links, secrets }),
    summary: clean(lines.join("\n"), { links, secrets }),
  };
}
