import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branchCommit, createBareRepo, listRefs } from "../../support/git-server.js";
import { contentsAt } from "../../support/github/contents.js";
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
    for (const other of ["HEAD", main, "v1", "topic~1", "missing"])
      expect(await branchCommit(bare, other)).toBeUndefined();
    // A tag of the same name is what rev-parse reads first.
    await run("git", ["tag", "topic", main], { cwd: bare });
    expect(await branchCommit(bare, "topic")).toBeUndefined();
    expect(await resolveCommit(bare, "topic")).toBe(main);
    expect(await resolveCommit(bare, "heads/topic")).toBe(branch);
    expect(await resolveCommit(bare, "missing")).toBeNull();
  });

  it("answers contents from the branch's commit now, after the branch moves, and 404s a ref that names nothing", async () => {
    const before = await contentsAt(bare, "main", "docs");
    expect(Array.isArray(before) && before.map((e) => e.path)).toEqual(["docs/guide.md"]);
    expect(await contentsAt(bare, "main", "docs/new.md")).toBeNull();
    const moved = await commitOnBranch(bare, "main", main, { "docs/new.md": "new\n" }, "new", author);
    const after = await contentsAt(bare, "main", "docs/new.md");
    expect(after && !Array.isArray(after) && after.type === "file" && after.content).toBe(
      Buffer.from("new\n").toString("base64"),
    );
    // The old commit's answer stays what it was.
    expect(await contentsAt(bare, main, "docs/new.md")).toBeNull();
    expect(await contentsAt(bare, moved, "README.md/")).toBeNull();
    const unknown = "0".repeat(40);
    expect(await contentsAt(bare, unknown, "")).toBeNull();
    expect(await contentsAt(bare, "no-such-branch", "README.md")).toBeNull();
  });
});
