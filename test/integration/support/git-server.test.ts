import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branchCommit, createBareRepo, listRefs } from "../../support/git-server.js";
import { commitOnBranch, resolveCommit } from "../../support/github/git-history.js";

const run = promisify(execFile);
const author = { name: "Someone", email: "someone@example.com" };

/** What git itself lists: the answer listRefs reads from the files instead. */
async function gitRefs(bare: string): Promise<Record<string, string>> {
  const { stdout } = await run("git", ["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: bare });
  return Object.fromEntries(
    stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split(" ") as [string, string]),
  );
}

describe("the git stand-in's refs, read from the repository's files", () => {
  let root: string;
  let bare: string;
  let main: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "af-refs-test-"));
    bare = await createBareRepo(root, "octo", "refs", { "README.md": "hello\n", "docs/guide.md": "guide\n" });
    main = (await gitRefs(bare))["refs/heads/main"] ?? "";
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("lists loose, nested and packed refs as git for-each-ref does, in its order, a loose ref over its packed one", async () => {
    await commitOnBranch(bare, "agent-fix/issue-1", main, { "a.txt": "a\n" }, "a", author);
    await run("git", ["tag", "-a", "-m", "release", "v1", main], {
      cwd: bare,
      env: { ...process.env, GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" },
    });
    expect(await listRefs(bare)).toEqual(await gitRefs(bare));
    await run("git", ["pack-refs", "--all"], { cwd: bare });
    // Packed now; then a branch moves again (a loose ref over its packed line) and one is deleted.
    await commitOnBranch(bare, "agent-fix/issue-1", main, { "b.txt": "b\n" }, "b", author);
    await commitOnBranch(bare, "gone", main, { "c.txt": "c\n" }, "c", author);
    await run("git", ["update-ref", "-d", "refs/heads/gone"], { cwd: bare });
    await run("git", ["symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/main"], { cwd: bare });
    const refs = await listRefs(bare);
    expect(refs).toEqual(await gitRefs(bare));
    expect(Object.keys(refs)).toEqual(Object.keys(await gitRefs(bare)));
    expect(refs).not.toHaveProperty("refs/heads/gone");
  });

  it("resolves a branch name without git as rev-parse does, and leaves tags, object ids and HEAD to git", async () => {
    const branch = await commitOnBranch(bare, "topic", main, { "t.txt": "t\n" }, "t", author);
    expect(await branchCommit(bare, "topic")).toBe(branch);
    expect(await branchCommit(bare, "refs/heads/topic")).toBe(branch);
    expect(await branchCommit(bare, "heads/topic")).toBe(branch);
    for (const other of ["HEAD", main, main.slice(0, 7), "v1", "topic~1", "topic@{1}", "a..b"])
      expect(await branchCommit(bare, other)).toBeUndefined();
    // A plain name no ref has names nothing, as git says.
    for (const missing of ["missing", "agent-fix/issue-9", "refs/heads/missing"]) {
      expect(await branchCommit(bare, missing)).toBeNull();
      await expect(
        run("git", ["rev-parse", "--verify", "--quiet", `${missing}^{commit}`], { cwd: bare }),
      ).rejects.toThrow();
    }
    // A tag of the same name is what rev-parse reads first.
    await run("git", ["tag", "topic", main], { cwd: bare });
    expect(await branchCommit(bare, "topic")).toBeUndefined();
    expect(await resolveCommit(bare, "topic")).toBe(main);
    expect(await resolveCommit(bare, "heads/topic")).toBe(branch);
    expect(await resolveCommit(bare, "missing")).toBeNull();
  });
});
