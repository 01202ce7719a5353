/**
 * `agent-fix mine` against the GitHub stand-in and its git server: a repository whose history holds
 * pull requests that make instances and pull requests that must be skipped (no linked issue, no test
 * change, not merged, no test failing before the fix, merged before --since). The instances are
 * checked field by field, FAIL_TO_PASS and PASS_TO_PASS found by really running the tests in Docker,
 * and `agent-fix eval` with a replay model runs on the mined file.
 */
import { cp, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, evalFixtures, gitIn, readEvalResults, resultOf } from "../support/eval-repo.js";
import { type GitHubServer, startGitHubServer } from "../support/github-server.js";
import { requireSandboxImage } from "../support/services.js";

const ready = await requireSandboxImage();
const PYTHON = `"$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)"`;
const SETUP = "python3 -m venv --without-pip .venv";

const OPS = await readFile(join(evalFixtures, "repo/mathx/ops.py"), "utf8");
const MEAN_FIXED = OPS.replace(
  "    return sum(values) / len(values)",
  "    if not values:\n        return 0\n    return sum(values) / len(values)",
);
const CLAMP_REFACTORED = (ops: string) =>
  ops.replace(
    "    return max(low, min(value, high))",
    "    if value < low:\n        return low\n    return min(value, high)",
  );
const CLAMP_CHECKED = (ops: string) =>
  ops.replace(
    '    """Limit value to the range [low, high]."""\n',
    '    """Limit value to the range [low, high]."""\n    if low > high:\n        raise ValueError("low > high")\n',
  );
const unittestFile = (name: string, body: string) =>
  `import unittest\n\nfrom mathx.ops import clamp\n\n\nclass ${name}(unittest.TestCase):\n${body}`;

interface PullSpec {
  title: string;
  body: string;
  /** Path -> new text, read from the branch's current files. */
  change: (files: (path: string) => Promise<string>) => Promise<Record<string, string>>;
  merged: boolean;
  at: string;
}

// The two tests only read the history beforeAll wrote (the refusal makes no request), so they run side by
// side: the refusal's CLI start overlaps the mining.
describe.runIf(ready).concurrent("agent-fix mine on a repository's history", { timeout: 1_800_000 }, () => {
  let server: GitHubServer;
  let token: string;
  let work: string;
  const pulls = new Map<string, { number: number; base: string; head: string; mergedAt: string }>();
  let env: Record<string, string>;

  /** A branch off main with `spec`'s change, its refs/pull/N/head, merged into main when it was. */
  async function addPull(key: string, spec: PullSpec, git: (...args: string[]) => Promise<string>) {
    const number = server.state.nextNumber("acme", "mathx");
    await git("checkout", "-q", "main");
    const base = (await git("rev-parse", "HEAD")).trim();
    await git("checkout", "-q", "-b", `pr-${number}`);
    const changes = await spec.change((path) => readFile(join(work, path), "utf8"));
    for (const [path, text] of Object.entries(changes)) await writeFile(join(work, path), text);
    await git("add", "-A");
    await git("commit", "-q", "-m", spec.title);
    const head = (await git("rev-parse", "HEAD")).trim();
    await git("push", "-q", "origin", `HEAD:refs/pull/${number}/head`);
    if (spec.merged) {
      await git("checkout", "-q", "main");
      await git("merge", "-q", "--no-ff", "-m", `Merge pull request #${number}`, `pr-${number}`);
      // Straight into the bare repository: the stand-in's hook refuses pushes to main, as GitHub's
      // branch protection would; the history is the test's setting, not a push under test.
      await git("push", "-q", "origin", "main:refs/seed/main");
      const bare = gitIn(server.repoDir("acme", "mathx"));
      await bare("update-ref", "refs/heads/main", (await git("rev-parse", "main")).trim());
      await bare("update-ref", "-d", "refs/seed/main");
    }
    const updatedAt = new Date(Date.parse(spec.at) + 60_000).toISOString();
    server.state.pulls.push({
      ...{ owner: "acme", repo: "mathx", number, title: spec.title, body: spec.body },
      ...{ head: `pr-${number}`, base: "main", draft: false, state: "closed", reviewRequests: [] },
      user: { login: "dev", id: 700, type: "User" },
      ...{
        baseSha: base,
        headSha: head,
        createdAt: spec.at,
        updatedAt,
        mergedAt: spec.merged ? spec.at : null,
      },
    });
    pulls.set(key, { number, base, head, mergedAt: spec.at });
  }

  beforeAll(async () => {
    server = await startGitHubServer();
    const files: Record<string, string> = { "setup.cfg": "[flake8]\nmax-line-length = 100\n" };
    for (const path of [
      "README.md",
      ".gitignore",
      "mathx/__init__.py",
      "mathx/ops.py",
      "tests/__init__.py",
      "tests/test_ops.py",
    ])
      files[path] = await readFile(join(evalFixtures, "repo", path), "utf8");
    await server.addRepo({ owner: "acme", name: "mathx", files });
    server.addIssue("acme", "mathx", {
      title: "mean() of an empty list raises ZeroDivisionError",
      body: "mean([]) should return 0.",
    });
    server.addIssue("acme", "mathx", {
      title: "clamp() accepts low > high",
      body: "It should raise ValueError.",
    });
    work = await mkdtemp(join(tmpdir(), "mine-history-"));
    const git = gitIn(work);
    await git("clone", "-q", server.repoDir("acme", "mathx"), ".");
    const old = "2020-01-01T00:00:00.000Z";
    await addPull(
      "old",
      {
        title: "An old fix",
        body: "Fixes #1",
        merged: true,
        at: old,
        change: async () => ({ "tests/test_old.py": "import unittest\n", "README.md": "old\n" }),
      },
      git,
    );
    await addPull(
      "mean",
      {
        title: "mean() of nothing is 0",
        body: "Fixes #1\n\nWith a test.",
        merged: true,
        at: "2025-03-01T10:00:00.000Z",
        change: async (read) => ({
          "mathx/ops.py": MEAN_FIXED,
          "tests/test_ops.py": (await read("tests/test_ops.py")).replace(
            "    def test_clamp(self):",
            "    def test_mean_of_empty(self):\n        self.assertEqual(mean([]), 0)\n\n    def test_clamp(self):",
          ),
        }),
      },
      git,
    );
    await addPull(
      "no-issue",
      {
        title: "A small cleanup",
        body: "Nothing to close here.",
        merged: true,
        at: "2025-03-02T10:00:00.000Z",
        change: async (read) => ({
          "mathx/ops.py": `${await read("mathx/ops.py")}\n\ndef double(value):\n    return 2 * value\n`,
          "tests/test_double.py":
            "import unittest\n\nfrom mathx.ops import double\n\n\nclass DoubleTest(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(2), 4)\n",
        }),
      },
      git,
    );
    await addPull(
      "no-test",
      {
        title: "Document clamp",
        body: "Closes #2",
        merged: true,
        at: "2025-03-03T10:00:00.000Z",
        change: async (read) => ({ "README.md": `${await read("README.md")}\nclamp(value, low, high)\n` }),
      },
      git,
    );
    await addPull(
      "closed",
      {
        title: "clamp checks its range",
        body: "Fixes #2",
        merged: false,
        at: "2025-03-04T10:00:00.000Z",
        change: async (read) => ({
          "mathx/ops.py": CLAMP_CHECKED(await read("mathx/ops.py")),
          "tests/test_range.py": unittestFile(
            "RangeTest",
            "    def test_bad(self):\n        self.assertRaises(ValueError, clamp, 1, 3, 0)\n",
          ),
        }),
      },
      git,
    );
    await addPull(
      "passing",
      {
        title: "Simpler clamp",
        body: "Resolves #2 (part one)",
        merged: true,
        at: "2025-03-05T10:00:00.000Z",
        change: async (read) => ({
          "mathx/ops.py": CLAMP_REFACTORED(await read("mathx/ops.py")),
          "tests/test_low.py": unittestFile(
            "LowTest",
            "    def test_below(self):\n        self.assertEqual(clamp(-1, 0, 3), 0)\n",
          ),
        }),
      },
      git,
    );
    await addPull(
      "clamp",
      {
        title: "clamp() refuses low > high",
        body: `Fixes acme/mathx#2, see ${server.url}/acme/mathx/issues/2; unrelated to other/repo#1.`,
        merged: true,
        at: "2025-03-06T10:00:00.000Z",
        change: async (read) => ({
          "mathx/ops.py": CLAMP_CHECKED(await read("mathx/ops.py")),
          "tests/test_clamp.py": unittestFile(
            "ClampTest",
            "    def test_in_range(self):\n        self.assertEqual(clamp(2, 0, 3), 2)\n\n    def test_low_above_high_raises(self):\n        self.assertRaises(ValueError, clamp, 1, 3, 0)\n",
          ),
        }),
      },
      git,
    );
    token = server.mintToken();
    env = {
      GITHUB_TOKEN: token,
      GHE_HOST: server.host,
      GHE_PROTOCOL: "http",
      AGENT_FIX_GITHUB_THROTTLE: "false",
    };
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("builds the instances of the qualifying pull requests, and says why each other one is skipped", async () => {
    // The first page is refused by a secondary rate limit: the app's Octokit setup waits and retries.
    server.rateLimitNext("GET", /^\/repos\/acme\/mathx\/pulls$/, { retryAfterSeconds: 1 });
    const out = join(work, "..", `${work.split("/").pop()}-mined.jsonl`);
    const mined = await cli(
      ["mine", "acme/mathx", "--since", "2025-01-01", "--out", out, "--setup", SETUP],
      env,
    );
    // The wait is told (the Octokit's log), and is the only thing on stderr.
    expect(mined.stderr.trim()).toMatch(
      /^GitHub secondary rate limit on GET \S+\/repos\/acme\/mathx\/pulls\?\S+: retrying in 1 s$/,
    );
    expect(mined.code).toBe(0);
    const number = (key: string) => pulls.get(key)!.number;
    const lines = mined.stdout.split("\n");
    expect(lines).toContain(
      `#${number("passing")} skipped: no failing test (no test fails before the fix and passes after it)`,
    );
    expect(lines).toContain(`#${number("closed")} skipped: not merged (closed without merging)`);
    expect(lines).toContain(
      `#${number("no-test")} skipped: no test change (it changes only one kind of file)`,
    );
    expect(lines).toContain(
      `#${number("no-issue")} skipped: no linked issue (its description closes no issue of the repository)`,
    );
    expect(mined.stdout).not.toContain(`#${number("old")} `);
    expect(lines).toContain(`2 instance(s) written to ${out}, 4 pull request(s) skipped`);

    const text = await readFile(out, "utf8");
    expect(text).not.toContain(token);
    const instances = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const git = gitIn(work);
    const diff = async (key: string, ...paths: string[]) => {
      const pull = pulls.get(key)!;
      return git("diff", "--binary", `${pull.base}...${pull.head}`, "--", ...paths);
    };
    const expected = async (key: string, issue: string, tests: string[], rest: object) => ({
      instance_id: `acme__mathx-${number(key)}`,
      repo: `${server.url}/acme/mathx.git`,
      base_commit: pulls.get(key)!.base,
      problem_statement: issue,
      test_patch: await diff(key, ...tests),
      patch: await diff(key, "mathx/ops.py"),
      setup: [SETUP],
      test_command: `${PYTHON} -m unittest {tests}`,
      pull_number: number(key),
      created_at: pulls.get(key)!.mergedAt,
      ...rest,
    });
    expect(instances).toEqual([
      await expected(
        "clamp",
        "clamp() accepts low > high\nIt should raise ValueError.",
        ["tests/test_clamp.py"],
        {
          FAIL_TO_PASS: ["tests.test_clamp.ClampTest.test_low_above_high_raises"],
          PASS_TO_PASS: ["tests.test_clamp.ClampTest.test_in_range"],
          issue_numbers: [2],
        },
      ),
      await expected(
        "mean",
        "mean() of an empty list raises ZeroDivisionError\nmean([]) should return 0.",
        ["tests/test_ops.py"],
        {
          FAIL_TO_PASS: ["tests.test_ops.OpsTest.test_mean_of_empty"],
          PASS_TO_PASS: ["tests.test_ops.OpsTest.test_clamp", "tests.test_ops.OpsTest.test_mean"],
          issue_numbers: [1],
        },
      ),
    ]);
    expect(String(instances[0]!.test_patch)).toContain("+++ b/tests/test_clamp.py");
    expect(String(instances[0]!.patch)).toContain('+        raise ValueError("low > high")');
    // The retried page, then the pull requests' files through the REST API.
    const listed = server.state.requests.filter((r) => r.path === "/repos/acme/mathx/pulls");
    expect(listed.map((r) => r.status)).toEqual([403, 200]);

    // The mined file is what agent-fix eval reads: one instance fixed by a replay, one never submitted.
    const replays = await mkdtemp(join(tmpdir(), "mine-replays-"));
    await cp(
      join(evalFixtures, "replays/fix-mean.jsonl"),
      join(replays, `acme__mathx-${number("mean")}.jsonl`),
    );
    await cp(
      join(evalFixtures, "replays/no-submit.jsonl"),
      join(replays, `acme__mathx-${number("clamp")}.jsonl`),
    );
    const results = await mkdtemp(join(tmpdir(), "mine-eval-"));
    const evaluated = await cli(
      ["eval", out, "--model", `replay:${replays}`, "--workers", "2", "--out", results],
      env,
    );
    expect(evaluated.stderr).toBe("");
    expect(evaluated.code).toBe(0);
    const graded = await readEvalResults(results);
    expect(resultOf(graded, `acme__mathx-${number("mean")}`)).toMatchObject({
      resolved: true,
      exit_status: "submitted",
    });
    expect(resultOf(graded, `acme__mathx-${number("mean")}`).grade).toEqual({
      resolved: true,
      FAIL_TO_PASS: { passed: ["tests.test_ops.OpsTest.test_mean_of_empty"], failed: [] },
      PASS_TO_PASS: {
        passed: ["tests.test_ops.OpsTest.test_clamp", "tests.test_ops.OpsTest.test_mean"],
        failed: [],
      },
    });
    expect(resultOf(graded, `acme__mathx-${number("clamp")}`)).toMatchObject({
      resolved: false,
      exit_status: "exit_replay_exhausted",
    });
    expect((await readdir(results)).sort()).toEqual([
      "predictions.jsonl",
      "report.md",
      "results.json",
      "trajectories",
    ]);
  });

  it("refuses to start without a token, saying where it goes", async () => {
    const result = await cli(["mine", "acme/mathx"], { ...env, GITHUB_TOKEN: "", GH_TOKEN: "" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("needs a GitHub token in GITHUB_TOKEN");
  });
});
