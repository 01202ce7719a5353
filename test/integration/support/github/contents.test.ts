import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBareRepo, listRefs } from "../../../support/git-server.js";
import { contentsAt } from "../../../support/github/contents.js";
import { commitOnBranch } from "../../../support/github/git-history.js";

const run = promisify(execFile);
const author = { name: "Someone", email: "someone@example.com" };

describe("the GitHub stand-in's contents, read from a commit's whole tree", () => {
  let root: string;
  let bare: string;
  let main: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "af-contents-test-"));
    bare = await createBareRepo(root, "octo", "contents", {
      "README.md": "hello\n",
      "docs/guide.md": "guide\n",
      "docs/deep/more.md": "more\n",
      "docs-b.md": "b\n",
      "a.txt": "a\n",
    });
    main = (await listRefs(bare))["refs/heads/main"] ?? "";
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("lists a directory as git ls-tree does, in its order, with blob sizes", async () => {
    for (const dir of ["", "docs", "docs/", "docs/deep"]) {
      const { stdout } = await run(
        "git",
        ["ls-tree", "-z", "--long", "main", "--", dir === "" ? "." : `${dir.replace(/\/$/, "")}/`],
        { cwd: bare },
      );
      const expected = stdout
        .split("\0")
        .filter(Boolean)
        .map((line) => {
          const [meta = "", path = ""] = line.split("\t");
          const [, type = "", sha = "", size = "-"] = meta.trim().split(/\s+/);
          return { type: type === "tree" ? "dir" : "file", path, sha, size: size === "-" ? 0 : Number(size) };
        });
      const listed = await contentsAt(bare, "main", dir);
      expect(
        Array.isArray(listed) && listed.map(({ type, path, sha, size }) => ({ type, path, sha, size })),
      ).toEqual(expected);
    }
  });

  it("answers contents from the branch's commit now, after the branch moves, and 404s a ref that names nothing", async () => {
    const before = await contentsAt(bare, "main", "docs");
    expect(Array.isArray(before) && before.map((e) => e.path)).toEqual(["docs/deep", "docs/guide.md"]);
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
