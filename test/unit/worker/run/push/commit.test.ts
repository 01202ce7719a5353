import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fixBranch } from "../../../../../src/shared/fix-branch.js";
import { cloneRepository, filesContaining } from "../../../../../worker/run/checkout/clone.js";
import { commitAhead, commitPatch, pushFixBranch } from "../../../../../worker/run/push/commit.js";

// Real git against a bare repository on disk (file:// ignores the auth header; the stand-in e2e checks it).
function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@x",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@x",
    },
  });
}

describe("clone, commit and push on the host", () => {
  let root: string;
  let bare: string;
  const token = "ghs_unit_test_token_0123456789";
  const identity = { name: "agent-fix[bot]", email: "1+agent-fix[bot]@users.noreply.github.com" };

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "af-commit-"));
    const seed = join(root, "seed");
    bare = join(root, "origin.git");
    sh(root, "init", "--quiet", "-b", "main", seed);
    await writeFile(join(seed, "a.txt"), "one\n");
    sh(seed, "add", ".");
    sh(seed, "commit", "--quiet", "-m", "first");
    await writeFile(join(seed, "a.txt"), "one\ntwo\n");
    sh(seed, "commit", "--quiet", "-am", "second");
    sh(root, "clone", "--quiet", "--bare", seed, bare);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("clones shallow, leaves no token in .git, and pushes the app's commit to the issue branch only", async () => {
    const dir = join(root, "work");
    const checkout = await cloneRepository({ cloneUrl: `file://${bare}`, token, dir, branch: "main" });
    expect(sh(dir, "rev-list", "--count", "HEAD").trim()).toBe("1");
    expect(await filesContaining(dir, token)).toEqual([]);
    expect(await readFile(join(dir, ".git", "config"), "utf8")).not.toMatch(/extraheader/i);

    const patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n";
    const { sha, changedPaths } = await commitPatch({
      dir,
      patch: `diff --git a/a.txt b/a.txt\n${patch}`,
      identity,
      issueNumber: 7,
      issueTitle: "Two should be three",
      forbiddenPaths: [".github/workflows/**"],
    });
    expect(changedPaths).toEqual(["a.txt"]);
    expect(sh(dir, "log", "-1", "--format=%an <%ae>|%cn|%B", sha).trim()).toBe(
      `${identity.name} <${identity.email}>|${identity.name}|Two should be three\n\nFixes #7`,
    );
    await pushFixBranch({ dir, issueNumber: 7, token });
    expect(sh(bare, "rev-parse", fixBranch(7)).trim()).toBe(sha);
    expect(sh(bare, "rev-parse", "main").trim()).toBe(checkout.headSha);

    // A retrigger rewrites the same branch (force), still leaving main alone.
    const again = join(root, "again");
    await cloneRepository({ cloneUrl: `file://${bare}`, token, dir: again, branch: "main" });
    await writeFile(join(again, "b.txt"), "new\n");
    const second = await commitPatch({
      dir: again,
      patch:
        "diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n",
      identity,
      issueNumber: 7,
      issueTitle: "Two should be three",
      forbiddenPaths: [],
    }).catch((e: unknown) => e);
    // b.txt already exists untracked in the work tree, so the patch is refused with a clear code.
    expect(second).toMatchObject({ code: "patch_does_not_apply" });
    await rm(join(again, "b.txt"));
    const third = await commitPatch({
      dir: again,
      patch:
        "diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n",
      identity,
      issueNumber: 7,
      issueTitle: "Two should be three",
      forbiddenPaths: [],
    });
    await pushFixBranch({ dir: again, issueNumber: 7, token });
    expect(sh(bare, "rev-parse", fixBranch(7)).trim()).toBe(third.sha);
    expect(sh(bare, "rev-parse", "main").trim()).toBe(checkout.headSha);
  });

  it("commits ahead the commit commitPatch makes, of the tested tree, leaving the checkout's files, index and HEAD as they were", async () => {
    const dir = join(root, "work");
    const { headSha } = await cloneRepository({ cloneUrl: `file://${bare}`, token, dir, branch: "main" });
    const patch =
      "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n";
    const change = {
      dir,
      identity,
      issueNumber: 7,
      issueTitle: "Two should be three",
      forbiddenPaths: [],
    };
    // The tested tree, as the gate computed it on the host: its objects in the checkout's store.
    await writeFile(join(root, "three.txt"), "one\nthree\n");
    const blob = sh(dir, "hash-object", "-w", join(root, "three.txt")).trim();
    const tested = execFileSync("git", ["mktree"], { cwd: dir, input: `100644 blob ${blob}\ta.txt\n` })
      .toString()
      .trim();

    const sha = await commitAhead({ ...change, baseSha: headSha, tree: tested });
    expect(sh(dir, "rev-parse", "HEAD").trim()).toBe(headSha);
    expect(sh(dir, "status", "--porcelain")).toBe("");
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("one\ntwo\n");
    expect(sh(dir, "rev-parse", `${sha}^{tree}`, `${sha}^`).trim().split("\n")).toEqual([tested, headSha]);
    const made = await commitPatch({ ...change, patch });
    // The same commit but for its time: author, committer, tree and message as commitPatch writes them.
    const described = (commit: string) =>
      sh(dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%T|%P|%B", commit);
    expect(described(sha)).toBe(described(made.sha));
    await pushFixBranch({ dir, issueNumber: 7, token, commit: sha });
    expect(sh(bare, "rev-parse", fixBranch(7)).trim()).toBe(sha);
  });

  it("commits nothing ahead for a change under a forbidden path, a tree the checkout does not hold, or no change", async () => {
    const dir = join(root, "work");
    const { headSha } = await cloneRepository({ cloneUrl: `file://${bare}`, token, dir, branch: "main" });
    const base = { dir, identity, issueNumber: 3, issueTitle: "x", baseSha: headSha };
    // The base's files plus a workflow: a tree the agent could have left.
    const listing = sh(dir, "ls-tree", "HEAD");
    const workflowBlob = execFileSync("git", ["hash-object", "-w", "--stdin"], {
      cwd: dir,
      input: "on: push\n",
    })
      .toString()
      .trim();
    const mktree = (input: string) => execFileSync("git", ["mktree"], { cwd: dir, input }).toString().trim();
    const workflows = mktree(`100644 blob ${workflowBlob}\tci.yml\n`);
    const github = mktree(`040000 tree ${workflows}\tworkflows\n`);
    const tree = mktree(`${listing}040000 tree ${github}\t.github\n`);
    const forbidden = await commitAhead({ ...base, tree, forbiddenPaths: [".github/workflows/**"] }).catch(
      (e: unknown) => e,
    );
    expect(forbidden).toMatchObject({ code: "forbidden_path" });
    expect((forbidden as Error).message).toContain(".github/workflows/ci.yml");
    // A tree whose objects are elsewhere: git refuses, and the push step commits as usual.
    const elsewhere = await commitAhead({ ...base, tree: `${"0".repeat(39)}1`, forbiddenPaths: [] }).catch(
      (e: unknown) => e,
    );
    expect(String(elsewhere)).toMatch(/git diff-tree failed/);
    const same = sh(dir, "rev-parse", "HEAD^{tree}").trim();
    const empty = await commitAhead({ ...base, tree: same, forbiddenPaths: [] }).catch((e: unknown) => e);
    expect(empty).toMatchObject({ code: "empty_patch" });
    expect(sh(dir, "rev-parse", "HEAD").trim()).toBe(headSha);
    expect(sh(dir, "status", "--porcelain")).toBe("");
  });

  it("refuses a change under a forbidden path, a rename into one included, before any commit", async () => {
    const dir = join(root, "work");
    const { headSha } = await cloneRepository({ cloneUrl: `file://${bare}`, token, dir, branch: "main" });
    const patch =
      "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\nnew file mode 100644\n--- /dev/null\n+++ b/.github/workflows/ci.yml\n@@ -0,0 +1 @@\n+on: push\n";
    const error = await commitPatch({
      dir,
      patch,
      identity,
      issueNumber: 3,
      issueTitle: "x",
      forbiddenPaths: [".github/workflows/**"],
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "forbidden_path" });
    expect(String((error as Error).message)).toContain(".github/workflows/ci.yml");
    expect(sh(dir, "rev-parse", "HEAD").trim()).toBe(headSha);

    sh(dir, "reset", "--quiet", "--hard");
    const rename = await commitPatch({
      dir,
      patch:
        "diff --git a/a.txt b/.github/workflows/a.txt\nsimilarity index 100%\nrename from a.txt\nrename to .github/workflows/a.txt\n",
      identity,
      issueNumber: 3,
      issueTitle: "x",
      forbiddenPaths: [".github/workflows/**"],
    }).catch((e: unknown) => e);
    expect(rename).toMatchObject({ code: "forbidden_path" });
    expect(sh(dir, "rev-parse", "HEAD").trim()).toBe(headSha);
  });

  it("refuses an empty submission and a URL with credentials", async () => {
    await expect(
      commitPatch({
        dir: root,
        patch: "  \n",
        identity,
        issueNumber: 1,
        issueTitle: "x",
        forbiddenPaths: [],
      }),
    ).rejects.toMatchObject({ code: "empty_patch" });
    await expect(
      cloneRepository({
        cloneUrl: "https://x:y@example.com/a/b.git",
        token,
        dir: join(root, "w"),
        branch: "main",
      }),
    ).rejects.toMatchObject({ code: "clone_url_has_credentials" });
  });
  it("a leased push replaces the branch while it is where the lease says, and never over someone's push", async () => {
    const branch = fixBranch(7);
    const seed = join(root, "seed");
    sh(seed, "push", "--quiet", bare, `main:refs/heads/${branch}`);
    const leased = sh(bare, "rev-parse", branch).trim();
    // A commit that does not descend from the branch's head, as a rebase's replay is.
    const dir = join(root, "replay");
    await cloneRepository({ cloneUrl: `file://${bare}`, token, dir, branch: "main" });
    sh(dir, "reset", "--quiet", "--hard", "HEAD");
    await writeFile(join(dir, "a.txt"), "replayed\n");
    sh(dir, "commit", "--quiet", "--amend", "-am", "replayed");
    const replayed = sh(dir, "rev-parse", "HEAD").trim();

    // Someone pushes on top of the branch meanwhile: the lease no longer holds, nothing is overwritten.
    await writeFile(join(seed, "b.txt"), "a person's\n");
    sh(seed, "add", "b.txt");
    sh(seed, "commit", "--quiet", "-m", "a person's commit");
    sh(seed, "push", "--quiet", bare, `HEAD:refs/heads/${branch}`);
    const persons = sh(bare, "rev-parse", branch).trim();
    const refused = await pushFixBranch({ dir, issueNumber: 7, token, lease: leased }).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: "branch_moved" });
    expect(sh(bare, "rev-parse", branch).trim()).toBe(persons);

    // Leased on what the branch holds now, the replay replaces it (not a fast-forward).
    await pushFixBranch({ dir, issueNumber: 7, token, lease: persons });
    expect(sh(bare, "rev-parse", branch).trim()).toBe(replayed);
  });
});
