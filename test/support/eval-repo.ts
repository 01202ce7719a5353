/**
 * For the `agent-fix eval` and `mine` tests: the CLI as a child process, and the fixture repository
 * test/fixtures/eval/repo as a git repository whose base commit lacks a fix that a later commit holds.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { InstanceResult } from "../../worker/eval/results.js";
import { cliScript } from "./built-sources.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
export const evalFixtures = join(root, "test/fixtures/eval");

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `agent-fix ARGS` as a child process, as a user runs the installed bin (built once, test/support/built-sources.ts);
 * `env` is laid over this process's environment.
 */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [await cliScript(), ...args], {
      cwd: root,
      env: { ...process.env, OPENAI_API_KEY: "", ...env },
      timeout: 900_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/** git in `dir` with a fixed author. */
export function gitIn(dir: string) {
  return async (...args: string[]) =>
    (
      await promisify(execFile)("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], {
        cwd: dir,
      })
    ).stdout;
}

/** The fixture as a git repository with one commit; returns its directory and the commit. */
async function fixtureRepository(): Promise<{ dir: string; base: string }> {
  const dir = await mkdtemp(join(tmpdir(), "eval-repo-"));
  await cp(join(evalFixtures, "repo"), dir, { recursive: true });
  const git = gitIn(dir);
  await git("init", "-q");
  await git("add", "-A");
  await git("commit", "-q", "-m", "mathx");
  // A later commit holding the fix: the agent must start from base_commit and never see it.
  await writeFile(
    join(dir, "mathx/ops.py"),
    (await readFile(join(dir, "mathx/ops.py"), "utf8")).replace(
      "    return sum(values) / len(values)",
      "    return sum(values) / len(values) if values else 0",
    ),
  );
  const base = (await git("rev-parse", "HEAD^{commit}")).trim();
  await git("commit", "-q", "-am", "the fix, after the base commit");
  return { dir, base };
}

/** The fixture's failing test (FAIL_TO_PASS) and the tests that must keep passing (PASS_TO_PASS). */
export const FIXTURE_F2P = "tests.test_empty.EmptyTest.test_mean_of_empty_list_is_zero";
export const FIXTURE_P2P = ["tests.test_ops.OpsTest.test_mean", "tests.test_ops.OpsTest.test_clamp"];

/**
 * SWE-bench-style instances, one per id, of a fresh fixtureRepository (mean() of an empty list), written
 * as JSON Lines to `file(dir)`; returns the file. `shape` changes an instance before it is written.
 */
export async function writeFixtureInstances(
  ids: readonly string[],
  file: (repoDir: string) => string,
  shape: (instance: Record<string, unknown>) => Record<string, unknown> = (instance) => instance,
): Promise<string> {
  const { dir, base } = await fixtureRepository();
  const testPatch = await readFile(join(evalFixtures, "test.patch"), "utf8");
  const lines = ids.map((id) =>
    JSON.stringify(
      shape({
        instance_id: id,
        repo: dir,
        base_commit: base,
        problem_statement: "mean() of an empty list raises ZeroDivisionError\nIt should return 0.",
        test_patch: testPatch,
        FAIL_TO_PASS: [FIXTURE_F2P],
        PASS_TO_PASS: FIXTURE_P2P,
        test_command: "python3 -m unittest {tests}",
      }),
    ),
  );
  const path = file(dir);
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

export const readEvalResults = async (out: string) =>
  (JSON.parse(await readFile(join(out, "results.json"), "utf8")) as { results: InstanceResult[] }).results;

export const resultOf = (results: InstanceResult[], id: string) =>
  results.find((result) => result.instance_id === id)!;
