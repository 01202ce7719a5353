/**
 * How to set up and test a repository that has no `.github/agent-fix.yml` (or one without a test
 * command): found from its own files, in two pure steps. `filesToRead` names the few files whose
 * text matters; `detectCommands` turns the file list and those texts into setup and test commands,
 * the variables they need in the shell, and the toolchain versions each part declares.
 */
import type { WorkspaceEnv } from "../../../src/shared/contracts.js";
import type { DetectedPart, RepoFiles } from "./ecosystem-rule.js";
import { findCandidates } from "./parts.js";
import { partRequirements, versionFiles } from "./requirements.js";

export interface Detection {
  parts: DetectedPart[];
  /** Every part's setup, in order, each command run from the repository root. */
  setup: string[];
  /** One command testing every part; null when nothing testable was found. */
  test: string | null;
  /** Every part's variables, for every sandbox's shell (their caches are the workspace's, shared). */
  env: WorkspaceEnv;
}

const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/** The files whose text detection reads, from the repository root: the rules' and the version files. */
export function filesToRead(paths: readonly string[]): string[] {
  const files = findCandidates(paths).flatMap(({ dir, rule, names }) =>
    [...rule.reads(names), ...versionFiles(rule.ecosystem, names)].map((name) => join(dir, name)),
  );
  return [...new Set(files)];
}

/** The parts found and the commands for them. */
export function detectCommands(files: RepoFiles): Detection {
  const candidates = findCandidates(files.paths);
  const parts: DetectedPart[] = [];
  const detect = ({ dir, rule, names }: (typeof candidates)[number]) => {
    const part = { names, text: (name: string) => files.contents.get(join(dir, name)) };
    const found = rule.detect(part);
    if (found)
      parts.push({
        dir,
        ecosystem: rule.ecosystem,
        ...found,
        env: found.env ?? {},
        requirements: partRequirements(rule.ecosystem, part),
      });
  };
  candidates.filter((c) => c.rule.ecosystem !== "make").forEach(detect);
  // A Makefile's `test` target stands in only for a directory with no other part in it or below it.
  const covered = (dir: string) =>
    parts.some((part) => dir === "" || part.dir === dir || part.dir.startsWith(`${dir}/`));
  candidates.filter((c) => c.rule.ecosystem === "make" && !covered(c.dir)).forEach(detect);
  const inDir = (dir: string, command: string) => (dir === "" ? command : `cd ${quote(dir)} && ${command}`);
  const setup = parts.flatMap((part) => part.setup.map((command) => inDir(part.dir, command)));
  const tests = parts.map((part) =>
    parts.length === 1 && part.dir === "" ? part.test : `(${inDir(part.dir, part.test)})`,
  );
  const vars = Object.assign({}, ...parts.map((part) => part.env)) as WorkspaceEnv["vars"];
  return { parts, setup, test: tests.length ? tests.join(" && ") : null, env: { vars, path: [] } };
}

/**
 * A command that sets the variables itself, for where the shell does not (a committed
 * .github/agent-fix.yml, an eval instance): `GOMODCACHE="$PWD/…" go test ./...`, or with `export`
 * before a compound command. `$PWD` is the repository root, where every command starts.
 */
export function withEnvPrefix(command: string, env: WorkspaceEnv): string {
  const assignments = Object.entries(env.vars).map(([name, value]) =>
    "value" in value ? `${name}=${value.value}` : `${name}="${value.prefix ?? ""}$PWD/${value.path}"`,
  );
  if (env.path.length) assignments.push(`PATH="${env.path.map((dir) => `$PWD/${dir}:`).join("")}$PATH"`);
  if (assignments.length === 0) return command;
  const simple = /^[\w./-]+(\s|$)/.test(command) && !/[;&|()]/.test(command);
  return simple ? `${assignments.join(" ")} ${command}` : `export ${assignments.join(" ")} && ${command}`;
}

/** A directory name as a shell word (they are plain names almost always). */
function quote(dir: string): string {
  return /^[\w./-]+$/.test(dir) ? dir : `'${dir.replace(/'/g, "'\\''")}'`;
}
