/**
 * The runner of an instance without a `test_command`: repository detection (worker/config/detect) on
 * the host checkout at the base commit (its file list and a few manifests, nothing run), then the
 * runner of the part at the repository's root.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../../src/shared/errors.js";
import type { RepoFiles } from "../config/detect/ecosystem-rule.js";
import { detectCommands, filesToRead, withEnvPrefix } from "../config/detect/index.js";
import { git } from "../run/checkout/git.js";
import type { EvalInstance } from "./instances.js";
import { runnerFor, type TestRunner } from "./runners.js";

/** A manifest larger than this is not read, as in the app's detection. */
const MAX_MANIFEST_BYTES = 512 * 1024;

interface FoundRunner {
  runner: TestRunner;
  /** Detection's setup for that part (a virtual environment, dependencies). */
  setup: string[];
  /** What detection saw, for people. */
  evidence: string[];
}

/** The runner for the repository's root part; null when detection finds none agent-fix has ids for. */
export function chooseRunner(files: RepoFiles): FoundRunner | null {
  for (const found of detectCommands(files).parts.filter((candidate) => candidate.dir === "")) {
    // An instance's commands run as written, with no variables in the shell: each sets its own.
    const env = { vars: found.env, path: [] };
    const part = {
      ...found,
      setup: found.setup.map((command) => withEnvPrefix(command, env)),
      test: withEnvPrefix(found.test, env),
    };
    const script = part.ecosystem === "node" ? nodeTestScript(files.contents.get("package.json")) : "";
    const runner = runnerFor(part, script);
    if (runner) return { runner, setup: part.setup, evidence: part.evidence };
  }
  return null;
}

function nodeTestScript(text: string | undefined): string {
  try {
    const test = (JSON.parse(text ?? "{}") as { scripts?: { test?: unknown } }).scripts?.test;
    return typeof test === "string" ? test : "";
  } catch {
    // An unreadable package.json names no runner: the generic `npm test` one is used.
    return "";
  }
}

/** The checked-out files of `dir` (a git work tree) as detection sees a repository. */
export async function repoFilesIn(dir: string): Promise<RepoFiles> {
  const paths = (await git(["ls-files", "-z"], { cwd: dir })).split("\0").filter(Boolean);
  const contents = new Map<string, string>();
  for (const path of filesToRead(paths)) {
    const info = await stat(join(dir, path)).catch(() => null);
    if (info?.isFile() && info.size <= MAX_MANIFEST_BYTES)
      contents.set(path, await readFile(join(dir, path), "utf8"));
  }
  return { paths, contents };
}

/** The instance's setup and test command; what it leaves out comes from detection on its checkout. */
export async function instanceCommands(
  instance: EvalInstance,
  checkoutDir: string,
): Promise<{ setup: string[]; testCommand: string }> {
  if (instance.test_command) return { setup: instance.setup ?? [], testCommand: instance.test_command };
  const found = chooseRunner(await repoFilesIn(checkoutDir));
  if (!found) {
    throw new ConfigError(
      `instance ${instance.instance_id} has no test_command, and no test runner was found in its repository`,
      {
        code: "eval_runner_unknown",
        hint: "Give the instance a test_command with {tests} where the test ids go, e.g. 'python3 -m pytest {tests}'.",
      },
    );
  }
  return { setup: instance.setup ?? found.setup, testCommand: found.runner.template };
}
