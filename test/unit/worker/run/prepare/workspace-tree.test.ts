import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findSecrets, secretsIn } from "../../../../../worker/run/prepare/secret-scan.js";
import {
  type BaseCommit,
  diffTrees,
  loadBaseCommit,
  treeOfDirectory,
} from "../../../../../worker/run/prepare/workspace-tree.js";
import { patchPaths } from "../../../../../worker/run/solve/gate.js";

describe("the change computed on the host from a directory's files", () => {
  let root: string;
  let repo: string;
  let work: string;
  let base: BaseCommit;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], { cwd, encoding: "utf8" });

  async function setUp(files: Record<string, string>): Promise<void> {
    await mkdir(repo);
    for (const [path, body] of Object.entries(files)) {
      await mkdir(join(repo, path, ".."), { recursive: true });
      await writeFile(join(repo, path), body);
    }
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "base");
    await mkdir(join(root, "scratch"));
    base = await loadBaseCommit(
      join(repo, ".git"),
      git(repo, "rev-parse", "HEAD").trim(),
      join(root, "scratch"),
    );
    await cp(repo, work, { recursive: true, filter: (src) => !src.endsWith("/.git") });
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "af-tree-"));
    repo = join(root, "repo");
    work = join(root, "work");
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("takes every new file by its literal name: pathspec magic in a name (`:(glob)**`, `:!y`) is a name", async () => {
    await setUp({ "a.py": "a\n", ".gitignore": "*.log\n" });
    // Names git would read as pathspec magic: check-ignore --stdin failed on them and the run with it.
    const names = [":(literal)x", ":(glob)**", ":!y", ":(exclude)a.py", ":(icase)A.PY", ":^z"];
    for (const name of names) await writeFile(join(work, name), "new\n");
    await writeFile(join(work, ":(glob)x.log"), "ignored by .gitignore\n");
    const tree = await treeOfDirectory(base, work);
    const patch = await diffTrees(base, base.tree, tree);
    expect(patchPaths(patch).sort()).toEqual([...names].sort());
    await writeFile(join(root, "change.patch"), patch);
    git(repo, "apply", "--index", "--binary", join(root, "change.patch"));
    expect(git(repo, "write-tree").trim()).toBe(tree);
  });

  it("takes tracked changes, deletions, new files, modes and symlinks; leaves ignored files and artefacts out", async () => {
    await setUp({
      "a.py": "a\n",
      "gone.txt": "x\n",
      ".gitignore": "*.log\n",
      "sub/.gitignore": "!keep.log\n",
    });
    await writeFile(join(work, "a.py"), "a changed\n");
    await rm(join(work, "gone.txt"));
    await writeFile(join(work, "new.sh"), "#!/bin/sh\n");
    await chmod(join(work, "new.sh"), 0o755);
    await symlink("a.py", join(work, "link"));
    await writeFile(join(work, "debug.log"), "ignored by .gitignore\n");
    await mkdir(join(work, "sub/__pycache__"), { recursive: true });
    await writeFile(join(work, "sub/keep.log"), "re-included\n");
    await writeFile(join(work, "sub/__pycache__/m.cpython-311.pyc"), "bytecode");
    await writeFile(join(work, "sub/old.pyc"), "bytecode");
    await mkdir(join(work, "node_modules/x"), { recursive: true });
    await writeFile(join(work, "node_modules/x/index.js"), "");
    await mkdir(join(work, ".pytest_cache"));
    await writeFile(join(work, ".pytest_cache/lastfailed"), "{}");
    const tree = await treeOfDirectory(base, work);
    const patch = await diffTrees(base, base.tree, tree);
    expect(patchPaths(patch).sort()).toEqual(["a.py", "gone.txt", "link", "new.sh", "sub/keep.log"]);
    expect(patch).toContain("new file mode 100755");
    expect(patch).toContain("new file mode 120000");
    // Applied to the base, the patch gives exactly the computed tree.
    await writeFile(join(root, "change.patch"), patch);
    git(repo, "apply", "--index", "--binary", join(root, "change.patch"));
    expect(git(repo, "write-tree").trim()).toBe(tree);
  });

  it("keeps byte code a repository tracks on purpose", async () => {
    await setUp({ "fixtures/legacy.pyc": "v1", "m.py": "" });
    await writeFile(join(work, "fixtures/legacy.pyc"), "v2");
    await writeFile(join(work, "fixtures/extra.pyc"), "new");
    await mkdir(join(work, "__pycache__"));
    await writeFile(join(work, "__pycache__/m.cpython-311.pyc"), "bytecode");
    const patch = await diffTrees(base, base.tree, await treeOfDirectory(base, work));
    expect(patchPaths(patch).sort()).toEqual(["fixtures/extra.pyc", "fixtures/legacy.pyc"]);
  });

  it("leaves out a Cargo.lock that cargo wrote where the crate tracks none", async () => {
    await setUp({ "Cargo.toml": "[package]\n", "src/lib.rs": "" });
    await writeFile(join(work, "Cargo.lock"), "# generated\n");
    await writeFile(join(work, "src/lib.rs"), "pub fn f() {}\n");
    const patch = await diffTrees(base, base.tree, await treeOfDirectory(base, work));
    expect(patchPaths(patch)).toEqual(["src/lib.rs"]);
  });

  it("keeps the change of a Cargo.lock the crate tracks", async () => {
    await setUp({ "Cargo.toml": "[package]\n", "Cargo.lock": "# v1\n" });
    await writeFile(join(work, "Cargo.lock"), "# v2\n");
    const patch = await diffTrees(base, base.tree, await treeOfDirectory(base, work));
    expect(patchPaths(patch)).toEqual(["Cargo.lock"]);
  });

  it("stores the files' bytes whatever git config, attributes or hooks lie in the directory", async () => {
    await setUp({ "a.py": "a\n" });
    const marker = join(root, "marker");
    await mkdir(join(work, ".git/hooks"), { recursive: true });
    await writeFile(join(work, ".git/evil.sh"), `#!/bin/sh\ntouch ${marker}\n`);
    await chmod(join(work, ".git/evil.sh"), 0o755);
    await writeFile(
      join(work, ".git/config"),
      `[core]\n\tfsmonitor = ${work}/.git/evil.sh\n\thooksPath = ${work}/.git\n[diff]\n\texternal = ${work}/.git/evil.sh\n[filter "evil"]\n\tclean = ${work}/.git/evil.sh\n`,
    );
    await writeFile(join(work, ".gitattributes"), "*.py filter=evil diff=evil\n");
    await writeFile(join(work, "a.py"), "FIXED\n");
    const patch = await diffTrees(base, base.tree, await treeOfDirectory(base, work));
    expect(patch).toContain("+FIXED");
    expect(patchPaths(patch).sort()).toEqual([".gitattributes", "a.py"]);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("setup secrets in files and changes", () => {
  it("finds a value as it is, base64-encoded at any alignment, and in file names; never short values", async () => {
    const dir = await mkdtemp(join(tmpdir(), "af-secrets-"));
    try {
      const value = "tok_0123456789abcdef";
      await mkdir(join(dir, ".git"));
      await writeFile(join(dir, ".git/config"), value); // the worker's own .git is not searched
      await writeFile(join(dir, "plain"), `x=${value}\n`);
      await writeFile(join(dir, "encoded"), `auth=${Buffer.from(`ab${value}`).toString("base64")}\n`);
      await writeFile(join(dir, `name-${value}`), "");
      await writeFile(join(dir, "clean"), "nothing here yes\n");
      const hits = await findSecrets(dir, { TOKEN: value, SHORT: "yes" });
      expect(hits.map((hit) => `${hit.name}:${hit.file}`).sort()).toEqual([
        "TOKEN:encoded",
        `TOKEN:name-${value}`,
        "TOKEN:plain",
      ]);
      expect(secretsIn(`+key=${Buffer.from(`a${value}`).toString("base64")}`, { TOKEN: value })).toEqual([
        "TOKEN",
      ]);
      expect(secretsIn("+nothing", { TOKEN: value })).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
