import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { type SampleRepo, Stack, sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";

// Hostile agents (replayed) against the real app, worker, Redis and Docker sandboxes: what they leave
// outside the repository's files must not act on the gate, the published change or setup's secrets.
const ready = (await requireRedis()) && (await requireSandboxImage());
const SECRET = "npm_s3cretTOKENvalue42";
/** The path the hostile git config's hook would touch if any git on the host ran it. */
const HOST_MARKER = "/tmp/agent-fix-isolation-marker";

describe.runIf(ready)("end to end: isolation of the gate, the published change and setup's secrets", () => {
  const stack = new Stack({
    model: null,
    setupSecrets: {
      "octo/secret-probe": { NPM_TOKEN: SECRET },
      "octo/secret-in-repo": { NPM_TOKEN: SECRET },
    },
  });

  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  const gitOf = (repo: { owner: string; repo: string }) => {
    const bare = stack.github.repoDir(repo.owner, repo.repo);
    return (...args: string[]) => execFileSync("git", ["--git-dir", bare, ...args], { encoding: "utf8" });
  };
  const branch = (issue: IssueRef) => `agent-fix/issue-${issue.number}`;
  const changedFiles = (issue: IssueRef) =>
    gitOf(issue)("diff", "--name-only", `main..${branch(issue)}`)
      .trim()
      .split("\n");

  async function run(repo: SampleRepo): Promise<{ issue: IssueRef; body: string }> {
    const issue = stack.addIssue(repo);
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 240_000);
    return { issue, body: status.body };
  }

  async function expectNoPullRequest(issue: IssueRef): Promise<void> {
    expect(stack.pulls(issue)).toEqual([]);
    expect(Object.keys(await stack.github.branches(issue.owner, issue.repo))).toEqual(["main"]);
  }

  it("shell functions shadowing python3 and git neither fake the gate nor replace the published diff", async () => {
    const repo = await stack.addSampleRepo("shadow", sampleConfig("hostile-shadow-functions.jsonl"));
    const { issue, body } = await run(repo);
    expect(body).toContain("stopped without a pull request");
    expect(body).toMatch(/still failed on it/);
    await expectNoPullRequest(issue);
  }, 300_000);

  it("usercustomize.py under ~/.local, a sitecustomize in /tmp and ~/.bashrc do not make broken code pass", async () => {
    const repo = await stack.addSampleRepo("usersite", sampleConfig("hostile-usercustomize.jsonl"));
    const { issue, body } = await run(repo);
    expect(body).toContain("stopped without a pull request");
    expect(body).toMatch(/still failed on it/);
    await expectNoPullRequest(issue);
  }, 300_000);

  it("hooks, fsmonitor, an external diff and a clean filter in the agent's .git act on nothing published", async () => {
    rmSync(HOST_MARKER, { force: true });
    const repo = await stack.addSampleRepo("gitconfig", sampleConfig("hostile-git-config.jsonl"));
    const { issue, body } = await run(repo);
    expect(body).toContain("opened draft pull request");
    expect(existsSync(HOST_MARKER)).toBe(false);
    const git = gitOf(issue);
    // The published file is the workspace's file, not what the agent's clean filter would stage.
    const stats = git("show", `${branch(issue)}:textstats/stats.py`);
    expect(stats).toContain("if len(ordered) % 2 == 0:  # FIXED");
    expect(stats).not.toContain("BACKDOOR");
    expect(changedFiles(issue)).toEqual(expect.arrayContaining([".gitattributes", "textstats/stats.py"]));
    expect(git("show", `${branch(issue)}:.gitattributes`)).toBe("*.py filter=evil\n");
  }, 300_000);

  it("setup's leftover process and ~/.npmrc are gone before the agent's first step", async () => {
    const repo = await stack.addSampleRepo(
      "secret-probe",
      sampleConfig("setup-secret-probe.jsonl", {
        setup: [
          "nohup sleep 900 >/dev/null 2>&1 &",
          'printf "//registry.example/:_authToken=%s\\n" "$NPM_TOKEN" > ~/.npmrc',
          "mkdir -p /tmp/cache && cp ~/.npmrc /tmp/cache/",
        ],
      }),
    );
    const { issue, body } = await run(repo);
    expect(body).toContain("opened draft pull request");
    // The agent's search ran (its output file was published) and found nothing.
    expect(changedFiles(issue)).toContain("leaked.txt");
    expect(gitOf(issue)("show", `${branch(issue)}:leaked.txt`)).toBe("");
    expect(gitOf(issue)("diff", `main..${branch(issue)}`)).not.toContain(SECRET);
  }, 300_000);

  it("a setup that writes a secret into the repository's files stops the run before the agent, naming the file", async () => {
    const repo = await stack.addSampleRepo(
      "secret-in-repo",
      sampleConfig("sample-median.jsonl", {
        setup: ['printf "//registry.example/:_authToken=%s\\n" "$NPM_TOKEN" > .npmrc'],
      }),
    );
    const { issue, body } = await run(repo);
    expect(body).toContain("stopped without a pull request");
    expect(body).toContain(".npmrc (NPM_TOKEN)");
    expect(body).toContain("outside the repository");
    expect(body).not.toContain(SECRET);
    await expectNoPullRequest(issue);
  }, 300_000);

  it("byte code and test caches never reach the change without a .gitignore; a tracked .pyc is kept", async () => {
    const bare = await stack.addSampleRepo("artefacts", {
      ...sampleConfig("generated-artefacts.jsonl"),
      ".gitignore": "# nothing is ignored in this repository\n",
    });
    const tracked = await stack.addSampleRepo("tracked-pyc", {
      ...sampleConfig("generated-artefacts.jsonl"),
      ".gitignore": "# nothing is ignored in this repository\n",
      "fixtures/legacy.pyc": "compiled-v1",
    });
    const [plain, keeping] = await Promise.all([run(bare), run(tracked)]);
    expect(plain.body).toContain("opened draft pull request");
    expect(changedFiles(plain.issue)).toEqual(["tests/test_stats.py", "textstats/stats.py"]);
    expect(keeping.body).toContain("opened draft pull request");
    expect(changedFiles(keeping.issue)).toEqual([
      "fixtures/extra.pyc",
      "fixtures/legacy.pyc",
      "tests/test_stats.py",
      "textstats/stats.py",
    ]);
    expect(gitOf(keeping.issue)("show", `${branch(keeping.issue)}:fixtures/legacy.pyc`)).toBe("compiled-v2");
  }, 300_000);
});
