import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cloneRepository } from "../../../../../worker/run/checkout/clone.js";
import { commitPatch, pushFixBranch } from "../../../../../worker/run/push/commit.js";
import type { PushRefusal } from "../../../../support/git-refusals.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";

// Clone and push against the git stand-in taught what GitHub's git server refuses (real git, real HTTP).
describe("what GitHub's git server refuses", () => {
  let github: GitHubServer;
  let root: string;
  const owner = "octo";
  const repo = "rules";
  const identity = { name: "agent-fix-test[bot]", email: "bot@users.noreply.example" };
  const cloneUrl = () => `${github.url}/${owner}/${repo}.git`;
  let dirs = 0;
  const clone = async (branch = "main") => {
    const dir = join(root, `clone-${dirs++}`);
    await cloneRepository({ cloneUrl: cloneUrl(), token: github.mintToken(), dir, branch });
    return dir;
  };
  /** A commit adding `path` (a workflow file or not). */
  const commitFile = (dir: string, path: string) =>
    commitPatch({
      dir,
      patch: `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+x\n`,
      identity,
      issueNumber: 1,
      issueTitle: "a change",
      forbiddenPaths: [],
    });
  const refuse = (refusal: PushRefusal) =>
    github.refusePushes(owner, repo, [{ branches: "agent-fix/*", refusal }]);

  beforeAll(async () => {
    github = await startGitHubServer();
    await github.addRepo({ owner, name: repo, files: { "a.txt": "a\n" } });
    root = await mkdtemp(join(tmpdir(), "af-git-refusals-"));
  });
  afterAll(async () => {
    await github.stop();
    await rm(root, { recursive: true, force: true });
  });

  it("a new token refused at first: clone and push try again and succeed", async () => {
    github.freshTokens.uses = 1;
    try {
      const dir = await clone();
      await commitFile(dir, "b.txt");
      await pushFixBranch({ dir, issueNumber: 7, token: github.mintToken() });
      expect(github.freshTokens.refused).toBe(2);
      expect(Object.keys(await github.branches(owner, repo))).toContain("agent-fix/issue-7");
    } finally {
      github.freshTokens.uses = 0;
    }
  });

  it("a token that stays refused still fails the clone, saying so, without retrying for long", async () => {
    const dir = join(root, "never");
    const error = await cloneRepository({
      cloneUrl: cloneUrl(),
      token: "ghs_unknown",
      dir,
      branch: "main",
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "git_clone_failed" });
  });

  it.each([
    {
      refusal: { kind: "workflows" } as const,
      code: "push_refused_workflows",
      says: "refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission",
    },
    {
      refusal: { kind: "ruleset", rules: ["Changes must be made through a pull request."] } as const,
      code: "push_refused_ruleset",
      says: "push declined due to repository rule violations. GitHub said: error: GH013: Repository rule violations found for refs/heads/agent-fix/issue-2.",
    },
    {
      refusal: { kind: "protected_branch", rules: ["Changes must be made through a pull request."] } as const,
      code: "push_refused_protected_branch",
      says: "protected branch hook declined. GitHub said: error: GH006: Protected branch update failed for refs/heads/agent-fix/issue-2. error: Changes must be made through a pull request.",
    },
    {
      refusal: { kind: "pre_receive", message: "Commits must carry a ticket number." } as const,
      code: "push_refused_pre_receive",
      says: "pre-receive hook declined. GitHub said: Commits must carry a ticket number.",
    },
  ])(
    "a push refused by $refusal.kind is reported with GitHub's reason, issue run or review run",
    async ({ refusal, code, says }) => {
      await refuse(refusal);
      try {
        const dir = await clone();
        await commitFile(dir, ".github/workflows/ci.yml");
        for (const force of [true, false]) {
          const error = await pushFixBranch({ dir, issueNumber: 2, token: github.mintToken(), force }).catch(
            (e: unknown) => e,
          );
          expect(error).toMatchObject({ code, fault: "repository", retryable: false });
          expect((error as Error).message).toContain(`GitHub refused the push to agent-fix/issue-2: ${says}`);
          expect((error as Error).message).not.toMatch(/moved|someone pushed/i);
        }
        expect(Object.keys(await github.branches(owner, repo))).not.toContain("agent-fix/issue-2");
      } finally {
        await github.refusePushes(owner, repo, []);
      }
    },
  );

  it("the workflows rule lets a change that leaves workflows alone through; a branch that moved is still named so", async () => {
    await refuse({ kind: "workflows" });
    try {
      const dir = await clone();
      await commitFile(dir, "c.txt");
      await pushFixBranch({ dir, issueNumber: 3, token: github.mintToken() });
      const other = await clone("agent-fix/issue-3");
      await commitFile(other, "d.txt");
      await pushFixBranch({ dir: other, issueNumber: 3, token: github.mintToken(), force: false });
      await commitFile(dir, "e.txt");
      const error = await pushFixBranch({
        dir,
        issueNumber: 3,
        token: github.mintToken(),
        force: false,
      }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "branch_moved" });
      const bare = github.repoDir(owner, repo);
      expect(
        execFileSync("git", ["--git-dir", bare, "log", "--format=%s", "agent-fix/issue-3"], {
          encoding: "utf8",
        }),
      ).toBe("a change\na change\nInitial commit\n");
    } finally {
      await github.refusePushes(owner, repo, []);
    }
  });
});
