/**
 * How to set up and test a repository that has no `.github/agent-fix.yml` (or one without a test
 * command): found from its own files, in two pure steps. `filesToRead` names the few files whose
 * text matters; `detectCommands` turns the file list and those texts into setup and test commands.
 */
import { findCandidates } from "./parts.js";
import type { DetectedPart, RepoFiles } from "./types.js";

export interface Detection {
  parts: DetectedPart[];
  /** Every part's setup, in order, each command run from the repository root. */
  setup: string[];
  /** One command testing every part; null when nothing testable was found. */
  test: string | null;
}

const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/** The files whose text detection reads, from the repository root. */
export function filesToRead(paths: readonly string[]): string[] {
  const files = findCandidates(paths).flatMap(({ dir, rule, names }) =>
    rule.reads(names).map((name) => join(dir, name)),
  );
  return [...new Set(files)];
}

/** The parts found and the commands for them. */
export function detectCommands(files: RepoFiles): Detection {
  const candidates = findCandidates(files.paths);
  const parts: DetectedPart[] = [];
  const detect = ({ dir, rule, names }: (typeof candidates)[number]) => {
    const found = rule.detect({ names, text: (name) => files.contents.get(join(dir, name)) });
    if (found) parts.push({ dir, ecosystem: rule.ecosystem, ...found });
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
  return { parts, setup, test: tests.length ? tests.join(" && ") : null };
}

/** A directory name as a shell word (they are plain names almost always). */
function quote(dir: string): string {
  return /^[\w./-]+$/.test(dir) ? dir : `'${dir.replace(/'/g, "'\\''")}'`;
}
