/**
 * The sessions bench:tokens replays: recorded replies of a model, the repository they were given, the
 * issue and the gate's test command. The real bugs are those of test/fixtures/real-bugs/ (a model in
 * the agent's seat, issue 27; each `project.json` names its registry archive, fetched and checked at
 * run time by test/support/registry-project.ts); the sample session is the repository's own fixture.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { commitAll, committedRepository } from "../test/support/committed-repo.js";
import {
  crate,
  goModule,
  npmPackage,
  type ProjectFiles,
  pypiSdist,
} from "../test/support/registry-project.js";
import { SAMPLE_ISSUE, SAMPLE_REPLAY, SAMPLE_REPO_DIR } from "../test/support/stack-parts.js";
import { readIssue } from "../worker/agent/cli-support.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REAL_BUGS = path.join(repoRoot, "test/fixtures/real-bugs");

export interface TokenSession {
  name: string;
  /** The recorded replies: a replay file (worker/model/replay.ts). */
  replay: string;
  issue: { title: string; body: string };
  /** The gate's command, as the recording was gated. */
  testCommand: string;
  /** The sandbox image the recording ran in; default: the one `agent-fix run` chooses. */
  image?: string | undefined;
  /** The repository, committed once under `root`; its directory. */
  checkout(root: string): Promise<string>;
  /** The patch the recorded session submitted, when it was kept: a replay must submit it again. */
  patch?: string | undefined;
}

const sample: TokenSession = {
  name: "sample-median",
  replay: SAMPLE_REPLAY,
  issue: SAMPLE_ISSUE,
  testCommand: "python3 -m unittest discover -s tests",
  checkout: async (root) => {
    const dir = path.join(root, "repo");
    cpSync(SAMPLE_REPO_DIR, dir, { recursive: true });
    commitAll(dir);
    return dir;
  },
};

/** What bench:tokens reads of a real bug's project.json (the recording's README says the rest). */
const projectSchema = z.object({
  registry: z.enum(["pypi", "npm", "go module proxy", "crates.io"]),
  name: z.string().min(1),
  version: z.string().min(1),
  image: z.string().min(1).optional(),
  testCommand: z.string().min(1),
});

const FETCH: Record<
  z.infer<typeof projectSchema>["registry"],
  (name: string, version: string) => Promise<ProjectFiles>
> = {
  pypi: pypiSdist,
  npm: npmPackage,
  "go module proxy": goModule,
  "crates.io": crate,
};

/**
 * A recording whose sandbox needed a test runner the project does not ship (no network, no setup in
 * `agent-fix run`): its `test-deps/` lockfile installed as the seat did (project.json's `testDeps`),
 * node_modules/ laid in the repository's root and excluded from git, so no diff holds it.
 */
function installTestDeps(testDeps: string, root: string, repo: string): void {
  const install = path.join(root, "test-deps");
  cpSync(testDeps, install, { recursive: true });
  execFileSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: install,
    stdio: "ignore",
  });
  // Verbatim: node_modules/.bin's links are relative, and must stay so to work inside the sandbox.
  cpSync(path.join(install, "node_modules"), path.join(repo, "node_modules"), {
    recursive: true,
    verbatimSymlinks: true,
  });
  appendFileSync(path.join(repo, ".git", "info", "exclude"), "/node_modules/\n");
}

/** One recorded real bug: its directory under test/fixtures/real-bugs/. */
async function realBug(name: string): Promise<TokenSession> {
  const dir = path.join(REAL_BUGS, name);
  const file = path.join(dir, "project.json");
  const parsed = projectSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(
      `${file}: ${issue.path.join(".") || "(file)"}: ${issue.message} (see test/fixtures/real-bugs/README.md for its fields)`,
    );
  }
  const project = parsed.data;
  const patch = path.join(dir, "agent.patch");
  const testDeps = path.join(dir, "test-deps");
  return {
    name,
    replay: path.join(dir, "replay.jsonl"),
    issue: await readIssue(path.join(dir, "issue.md")),
    testCommand: project.testCommand,
    image: project.image,
    patch: existsSync(patch) ? readFileSync(patch, "utf8") : undefined,
    checkout: async (root) => {
      await mkdir(root, { recursive: true });
      const files = await FETCH[project.registry](project.name, project.version);
      const repo = (await committedRepository(root, files)).dir;
      if (existsSync(testDeps)) installTestDeps(testDeps, root, repo);
      return repo;
    },
  };
}

/**
 * The real bugs recorded under test/fixtures/real-bugs/, then the sample; `main` are those a run
 * measures by default: the real bugs, or the sample while none is recorded.
 */
export async function tokenSessions(): Promise<{ all: TokenSession[]; main: TokenSession[] }> {
  const recorded = existsSync(REAL_BUGS)
    ? readdirSync(REAL_BUGS, { withFileTypes: true })
        .filter(
          (entry) => entry.isDirectory() && existsSync(path.join(REAL_BUGS, entry.name, "project.json")),
        )
        .map((entry) => entry.name)
        .sort()
    : [];
  const real = await Promise.all(recorded.map(realBug));
  return { all: [...real, sample], main: real.length > 0 ? real : [sample] };
}
