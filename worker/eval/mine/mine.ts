/**
 * `agent-fix mine OWNER/REPO`: SWE-bench-style instances from a repository's own history, the way
 * SWE-bench was built. Each merged pull request that closes an issue and changes both tests and code
 * becomes an instance: base commit the pull request's base, test patch its test files' diff, patch
 * (the gold fix) the rest, problem statement the issue, and the FAIL_TO_PASS / PASS_TO_PASS tests
 * found by running them in the sandbox. The token never reaches the output, git's argv or a sandbox.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProbotOctokit } from "probot";
import type { SandboxProvider } from "../../../src/shared/contracts.js";
import { git } from "../../run/checkout/git.js";
import { closedIssues, instanceId, type SkipReason, splitFiles } from "./candidates.js";
import { closedPulls, issueText, type MergedPull, mineClient, pullFiles } from "./github.js";
import { requireGitHubToken } from "./token.js";
import { validateCandidate } from "./validate.js";

interface MineOptions {
  owner: string;
  repo: string;
  since?: Date | undefined;
  /** Instances to produce at most (the most recently merged first). */
  limit: number;
  out: string;
  /** Setup commands instead of the detected ones. */
  setup?: string[] | undefined;
  provider: SandboxProvider;
  /** The image a candidate's checkout calls for (eval.ts's imageFor); undefined: the provider's default. */
  imageFor?: ((checkoutDir: string) => Promise<string | undefined>) | undefined;
  print: (line: string) => void;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

/** One line of the output: the eval's fields, then where it came from. */
interface MinedInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  test_patch: string;
  patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  setup: string[];
  test_command: string;
  pull_number: number;
  issue_numbers: number[];
  created_at: string;
}

type Outcome =
  | { kind: "instance"; instance: MinedInstance }
  | { kind: "skip"; reason: SkipReason; detail: string };

interface Mining {
  octokit: ProbotOctokit;
  options: MineOptions;
  token: string;
  cloneUrl: string;
  mirror: string;
}

export async function runMine(options: MineOptions): Promise<{ instances: number; skipped: number }> {
  const env = options.env ?? process.env;
  const token = requireGitHubToken(env);
  const octokit = mineClient(token, env);
  const { data: repository } = await octokit.rest.repos.get({ owner: options.owner, repo: options.repo });
  const work = await mkdtemp(join(tmpdir(), "agent-fix-mine-"));
  try {
    const mirror = join(work, "mirror.git");
    options.print(`agent-fix mine ${repository.full_name}: cloning ${repository.clone_url}`);
    await git(["clone", "--quiet", "--bare", repository.clone_url, mirror], {
      token,
      signal: options.signal,
    });
    const mining: Mining = { octokit, options, token, cloneUrl: repository.clone_url, mirror };
    const instances: MinedInstance[] = [];
    let skipped = 0;
    const where = { owner: options.owner, repo: options.repo, since: options.since };
    for await (const pull of closedPulls(octokit, where)) {
      if (instances.length >= options.limit) break;
      options.signal.throwIfAborted();
      const outcome = await minePull(mining, pull);
      if (outcome.kind === "skip") {
        skipped++;
        options.print(`#${pull.number} skipped: ${outcome.reason.replaceAll("_", " ")} (${outcome.detail})`);
        continue;
      }
      instances.push(outcome.instance);
      const { FAIL_TO_PASS, PASS_TO_PASS } = outcome.instance;
      options.print(
        `#${pull.number} -> ${outcome.instance.instance_id}: ${FAIL_TO_PASS.length} FAIL_TO_PASS, ${PASS_TO_PASS.length} PASS_TO_PASS`,
      );
      // Written after each one: an interrupted mining keeps what it found.
      await writeFile(
        options.out,
        instances.map((instance) => `${JSON.stringify(instance)}\n`).join(""),
        "utf8",
      );
    }
    if (instances.length === 0) await writeFile(options.out, "", "utf8");
    options.print(
      `${instances.length} instance(s) written to ${options.out}, ${skipped} pull request(s) skipped`,
    );
    return { instances: instances.length, skipped };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function minePull(
  mining: Mining,
  pull: Omit<MergedPull, "mergedAt"> & { mergedAt: string | null },
): Promise<Outcome> {
  const { octokit, options } = mining;
  const { owner, repo } = options;
  if (!pull.mergedAt) return { kind: "skip", reason: "not_merged", detail: "closed without merging" };
  const issues: { number: number; title: string; body: string }[] = [];
  for (const number of closedIssues(pull.body, owner, repo)) {
    const issue = await issueText(octokit, owner, repo, number).catch((error: { status?: number }) => {
      if (error.status === 404 || error.status === 410) return null;
      throw error;
    });
    if (issue) issues.push({ number, ...issue });
  }
  if (issues.length === 0) {
    return {
      kind: "skip",
      reason: "no_linked_issue",
      detail: "its description closes no issue of the repository",
    };
  }
  const split = splitFiles(await pullFiles(octokit, owner, repo, pull.number));
  if ("skip" in split)
    return { kind: "skip", reason: split.skip, detail: "it changes only one kind of file" };
  await fetchPull(mining, pull);
  // The pull request's own change: from where it branched off its base to its head.
  const diff = (paths: string[]) =>
    git(["diff", "--binary", `${pull.baseSha}...${pull.headSha}`, "--", ...paths], { cwd: mining.mirror });
  const testPatch = await diff(split.tests);
  const patch = await diff(split.code);
  const testFiles = await existingAfter(mining.mirror, pull.headSha, split.tests);
  const validation = await validateCandidate(
    { repo: mining.mirror, baseCommit: pull.baseSha, testPatch, patch, testFiles, setup: options.setup },
    {
      provider: options.provider,
      jobId: `mine-${repo}-${pull.number}`,
      signal: options.signal,
      imageFor: options.imageFor,
    },
  );
  if (validation.kind === "skip") return validation;
  return {
    kind: "instance",
    instance: {
      instance_id: instanceId(owner, repo, pull.number),
      repo: mining.cloneUrl,
      base_commit: pull.baseSha,
      problem_statement: issues.map((issue) => `${issue.title}\n${issue.body}`.trim()).join("\n\n"),
      test_patch: testPatch,
      patch,
      FAIL_TO_PASS: validation.FAIL_TO_PASS,
      PASS_TO_PASS: validation.PASS_TO_PASS,
      setup: validation.setup,
      test_command: validation.testCommand,
      pull_number: pull.number,
      issue_numbers: issues.map((issue) => issue.number),
      created_at: pull.mergedAt,
    },
  };
}

/** The pull request's head (GitHub keeps refs/pull/N/head after the branch is deleted) and its base. */
async function fetchPull(mining: Mining, pull: { number: number; baseSha: string }): Promise<void> {
  const ref = `refs/pull/${pull.number}/head`;
  await git(["fetch", "--quiet", "origin", `+${ref}:${ref}`], {
    cwd: mining.mirror,
    token: mining.token,
    signal: mining.options.signal,
  });
  const hasBase = await git(["cat-file", "-e", `${pull.baseSha}^{commit}`], { cwd: mining.mirror }).then(
    () => true,
    () => false,
  );
  if (!hasBase) {
    await git(["fetch", "--quiet", "origin", pull.baseSha], {
      cwd: mining.mirror,
      token: mining.token,
      signal: mining.options.signal,
    });
  }
}

/** The paths that exist at `commit` (a test file the pull request deletes is not run). */
async function existingAfter(mirror: string, commit: string, paths: readonly string[]): Promise<string[]> {
  const listed = await git(["ls-tree", "-r", "--name-only", commit, "--", ...paths], { cwd: mirror });
  return listed.split("\n").filter(Boolean);
}
