import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cloneRepository } from "../../../../../worker/run/checkout/clone.js";
import { commitAhead, commitPatch } from "../../../../../worker/run/push/commit.js";

// Real git: the agent's change is made in one clone and submitted as `git diff --binary` (as the
// sandbox's submit does), then applied by commitPatch on a fresh host clone of the same commit; the
// commit made ahead of its tree (commitAhead) is refused for the same reason.
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

describe("the commit's forbidden-path check sees renames, deletions, modes and symlinks", () => {
  let root: string;
  let bare: string;
  let runs = 0;
  const identity = { name: "agent-fix[bot]", email: "bot@users.noreply.example" };
  const forbiddenPaths = [".github/workflows/**", ".github/agent-fix.yml", "secrets"];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "af-forbidden-"));
    const seed = join(root, "seed");
    bare = join(root, "origin.git");
    sh(root, "init", "--quiet", "-b", "main", seed);
    await mkdir(join(seed, ".github", "workflows"), { recursive: true });
    await mkdir(join(seed, "secrets"));
    await writeFile(join(seed, ".github", "workflows", "ci.yml"), "on: push\n");
    await writeFile(join(seed, ".github", "agent-fix.yml"), "test:\n  command: make test\n");
    await writeFile(join(seed, "secrets", "run.sh"), "echo hi\n");
    await writeFile(join(seed, "a.txt"), "a\n");
    sh(seed, "add", ".");
    sh(seed, "commit", "--quiet", "-m", "first");
    sh(root, "clone", "--quiet", "--bare", seed, bare);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  /** Makes the change with `edit` in a scratch clone, submits its diff, returns commitPatch's outcome. */
  async function submit(edit: (dir: string) => Promise<void>) {
    const n = ++runs;
    const scratch = join(root, `agent-${n}`);
    sh(root, "clone", "--quiet", bare, scratch);
    await edit(scratch);
    sh(scratch, "add", "-A");
    const patch = sh(scratch, "diff", "--cached", "--binary", "HEAD");
    const dir = join(root, `host-${n}`);
    const { headSha } = await cloneRepository({
      cloneUrl: `file://${bare}`,
      token: "ghs_unit_test_token_forbidden_0123",
      dir,
      branch: "main",
    });
    const outcome = await commitPatch({
      dir,
      patch,
      identity,
      issueNumber: 1,
      issueTitle: "x",
      forbiddenPaths,
    }).catch((error: unknown) => error as Error & { code?: string });
    // A refused change leaves no commit behind.
    if (outcome instanceof Error) expect(sh(dir, "rev-parse", "HEAD").trim()).toBe(headSha);
    // The tested tree in the host's store, as the gate leaves it: the commit ahead agrees.
    sh(scratch, "commit", "--quiet", "-m", "tested");
    sh(dir, "fetch", "--quiet", scratch, "HEAD");
    const tree = sh(dir, "rev-parse", "FETCH_HEAD^{tree}").trim();
    const ahead = await commitAhead({
      dir,
      baseSha: headSha,
      tree,
      identity,
      issueNumber: 1,
      issueTitle: "x",
      forbiddenPaths,
    }).catch((error: unknown) => error as Error & { code?: string });
    if (outcome instanceof Error) expect(ahead).toMatchObject({ code: outcome.code });
    else expect(sh(dir, "rev-parse", `${ahead as string}^{tree}`).trim()).toBe(tree);
    return outcome;
  }

  it(".github/workflows turned into a symlink to a directory the agent filled is refused", async () => {
    const error = await submit(async (dir) => {
      await mkdir(join(dir, "ci"));
      await writeFile(join(dir, "ci", "evil.yml"), "on: push\njobs: {}\n");
      await rm(join(dir, ".github", "workflows"), { recursive: true });
      await symlink("../ci", join(dir, ".github", "workflows"));
    });
    expect(error).toMatchObject({ code: "forbidden_path" });
    expect((error as Error).message).toContain(".github/workflows (added as a symlink)");
  });

  it("a rename out of a forbidden path, a deletion and a mode change are refused", async () => {
    const moved = await submit((dir) => rename(join(dir, "secrets", "run.sh"), join(dir, "run.sh")));
    expect((moved as Error).message).toContain("secrets/run.sh (deleted)");
    const deleted = await submit((dir) => unlink(join(dir, ".github", "workflows", "ci.yml")));
    expect((deleted as Error).message).toContain(".github/workflows/ci.yml (deleted)");
    const mode = await submit((dir) => chmod(join(dir, "secrets", "run.sh"), 0o755));
    expect((mode as Error).message).toContain("secrets/run.sh (mode changed 100644 -> 100755)");
  });

  it("a symlink into a forbidden path or out of the repository is refused", async () => {
    const inward = await submit((dir) => symlink(".github/workflows/ci.yml", join(dir, "ci-link.yml")));
    expect((inward as Error).message).toContain(
      "ci-link.yml (a symlink to .github/workflows/ci.yml, a forbidden path)",
    );
    const outward = await submit((dir) => symlink("/etc/passwd", join(dir, "notes.txt")));
    expect((outward as Error).message).toContain(
      "notes.txt (a symlink to /etc/passwd, outside the repository)",
    );
  });

  it("the repository config rewritten by the agent is refused", async () => {
    const error = await submit((dir) =>
      writeFile(join(dir, ".github", "agent-fix.yml"), 'forbiddenPaths: []\ntest:\n  command: "true"\n'),
    );
    expect((error as Error).message).toContain(".github/agent-fix.yml (changed)");
  });

  it("an ordinary change and a symlink inside the repository pass", async () => {
    const outcome = await submit(async (dir) => {
      await writeFile(join(dir, "a.txt"), "b\n");
      await symlink("a.txt", join(dir, "b.txt"));
    });
    expect(outcome).toMatchObject({ changedPaths: ["a.txt", "b.txt"] });
  });
});
