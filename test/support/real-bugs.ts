/**
 * The real-bug recordings of test/fixtures/real-bugs/ (issue 27: a model in the agent's seat on four real
 * bugs of published projects), read from each one's project.json, and the repository each recording
 * started from laid out again: the registry's archive (registry-project.ts, checked against its digest),
 * committed once, its executable files marked as the archive had them, and the test runner its tests
 * need installed beside it where the project's own files do not bring one (node_modules/, excluded from
 * git so that no diff holds it). Nothing of the projects is kept in this repository.
 */
import { execFile } from "node:child_process";
import { appendFile, chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";
import { crate, goModule, npmPackage, type ProjectFiles, pypiSdist } from "./registry-project.js";

const run = promisify(execFile);
const REAL_BUGS_DIR = fileURLToPath(new URL("../fixtures/real-bugs/", import.meta.url));

const projectSchema = z.object({
  name: z.string().regex(/^[a-z0-9-]+$/),
  language: z.enum(["python", "go", "rust", "javascript"]),
  source: z.object({
    registry: z.enum(["pypi", "goproxy", "crates", "npm"]),
    package: z.string().min(1),
    version: z.string().min(1),
  }),
  fixedIn: z.string().min(1),
  /** The gate's command as the recording ran it. */
  testCommand: z.string().min(1),
  /** A test runner the project's tests need and its archive lacks (npm: package@version). */
  testDeps: z.object({ npm: z.string().min(1), lockfile: z.string().min(1) }).optional(),
  executable: z.array(z.string()),
  hidden: z.object({ file: z.string(), placeAt: z.string(), command: z.string() }),
  eval: z.object({
    test_command: z.string().includes("{tests}"),
    FAIL_TO_PASS: z.array(z.string().min(1)).min(1),
    PASS_TO_PASS: z.array(z.string().min(1)),
  }),
});

export interface RealBug {
  name: string;
  language: z.infer<typeof projectSchema>["language"];
  /** "package version (registry)", for titles. */
  project: string;
  /** The model's replies: a replay file (worker/model/replay.ts). */
  replay: string;
  /** issue.md: the first line the title, the rest the body. */
  issueText: string;
  issue: { title: string; body: string };
  /** The gate's command as the recording ran it. */
  testCommand: string;
  /** The patch the recording submitted. */
  patch: string;
  /** The later release's test for the bug, never shown to the agent: its text and where it goes. */
  hidden: { text: string; placeAt: string; command: string };
  /** The test runner installed beside the project (npm: package@version), if its tests need one. */
  testDeps?: { npm: string; lockfile: string };
  eval: z.infer<typeof projectSchema>["eval"];
  fetch(): Promise<ProjectFiles>;
  executable: string[];
}

const FETCH = {
  pypi: pypiSdist,
  goproxy: goModule,
  crates: crate,
  npm: npmPackage,
} as const;

/** Every recording under test/fixtures/real-bugs/, by name. */
export async function realBugs(): Promise<RealBug[]> {
  const bugs: RealBug[] = [];
  for (const entry of await readdir(REAL_BUGS_DIR, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(REAL_BUGS_DIR, entry.name);
    const where = join(dir, "project.json");
    const parsed = projectSchema.safeParse(JSON.parse(await readFile(where, "utf8")));
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`${where}: ${issue.path.join(".")}: ${issue.message}`);
    }
    const project = parsed.data;
    if (project.name !== entry.name)
      throw new Error(`${where}: name "${project.name}" is not its directory's`);
    const issueText = await readFile(join(dir, "issue.md"), "utf8");
    const [title = "", ...body] = issueText.trim().split("\n");
    const { registry, package: name, version } = project.source;
    bugs.push({
      name: project.name,
      language: project.language,
      project: `${name} ${version} (${registry})`,
      replay: join(dir, "replay.jsonl"),
      issueText,
      issue: { title: title.replace(/^#+\s*/, "").trim(), body: body.join("\n").trim() },
      testCommand: project.testCommand,
      patch: await readFile(join(dir, "agent.patch"), "utf8"),
      hidden: {
        text: await readFile(join(dir, project.hidden.file), "utf8"),
        placeAt: project.hidden.placeAt,
        command: project.hidden.command,
      },
      ...(project.testDeps
        ? { testDeps: { ...project.testDeps, lockfile: join(dir, project.testDeps.lockfile) } }
        : {}),
      eval: project.eval,
      fetch: () => FETCH[registry](name, version),
      executable: project.executable,
    });
  }
  return bugs.sort((a, b) => a.name.localeCompare(b.name));
}

async function git(dir: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("git", ["-c", "user.name=seat", "-c", "user.email=seat@localhost", ...args], {
    cwd: dir,
  });
  return stdout.trim();
}

/**
 * The repository the recording started from, in `dir` (which must not exist): the archive's files in
 * one commit on main; with `testDeps`, the bug's test runner in node_modules/ as the recording had it
 * (the lockfile's versions, installed by `npm ci` from the registry). Returns the commit.
 */
export async function checkoutRealBug(
  bug: RealBug,
  dir: string,
  options: { testDeps: boolean },
): Promise<string> {
  for (const [path, content] of Object.entries(await bug.fetch())) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  // ProjectFiles carry no modes; the agent's diffs name them (more-itertools' more.py is 100755).
  for (const path of bug.executable) await chmod(join(dir, path), 0o755);
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", `${bug.project}`);
  if (options.testDeps && bug.testDeps) {
    const install = await mkdtemp(join(tmpdir(), "real-bug-deps-"));
    try {
      await writeFile(join(install, "package-lock.json"), await readFile(bug.testDeps.lockfile));
      await writeFile(
        join(install, "package.json"),
        await readFile(join(dirname(bug.testDeps.lockfile), "package.json")),
      );
      await run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: install });
      // verbatimSymlinks: .bin/ links stay relative, not pointing into the removed install directory.
      await cp(join(install, "node_modules"), join(dir, "node_modules"), {
        recursive: true,
        verbatimSymlinks: true,
      });
    } finally {
      await rm(install, { recursive: true, force: true });
    }
    await appendFile(join(dir, ".git/info/exclude"), "node_modules/\n");
  }
  return git(dir, "rev-parse", "HEAD");
}

/**
 * The bug as an `agent-fix eval` instance (SWE-bench's fields) of the repository at `repoDir`, commit
 * `base`: its test patch adds the hidden test; a test runner the tests need is installed in setup.
 */
export function realBugInstance(bug: RealBug, repoDir: string, base: string): Record<string, unknown> {
  const lines = bug.hidden.text.replace(/\n$/, "").split("\n");
  const testPatch = [
    `diff --git a/${bug.hidden.placeAt} b/${bug.hidden.placeAt}`,
    "new file mode 100644",
    "--- /dev/null",
    `+++ b/${bug.hidden.placeAt}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((line) => `+${line}`),
    "",
  ].join("\n");
  // Setup has the network; /tmp keeps npm from reading the project's package.json (whose other
  // devDependencies the recording did not have), and node_modules/ lands at the root as it did there.
  const setup = bug.testDeps
    ? [
        `npm install --prefix /tmp/real-bug-deps --ignore-scripts --no-audit --no-fund ${bug.testDeps.npm}` +
          " && cp -r /tmp/real-bug-deps/node_modules node_modules",
      ]
    : [];
  return {
    instance_id: bug.name,
    repo: repoDir,
    base_commit: base,
    problem_statement: bug.issueText,
    test_patch: testPatch,
    ...bug.eval,
    setup,
  };
}
