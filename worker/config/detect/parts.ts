/**
 * Where the parts of a repository are: its root and, for a monorepo, directories up to two levels
 * down that hold an ecosystem's manifest. A directory inside a part of the same ecosystem belongs to
 * it (npm workspaces, Cargo and Go workspaces, Maven modules are run from their root).
 */

import type { EcosystemRule } from "./ecosystem-rule.js";
import { nodeRule } from "./node.js";
import { pythonByTestsOnly, pythonRule } from "./python.js";
import { makeRule, rubyRule } from "./ruby-make.js";
import { goRule, javaRule, rustRule } from "./toolchains.js";

/** Ecosystem rules in order; `make` last, used where no other rule gives a test command. */
const RULES: readonly EcosystemRule[] = [
  nodeRule,
  pythonRule,
  goRule,
  rustRule,
  rubyRule,
  javaRule,
  makeRule,
];

const MAX_DEPTH = 2;

/** Directories that hold examples, test data or vendored code, not parts to test. */
const NOT_PARTS = new Set([
  "node_modules",
  "vendor",
  "third_party",
  "testdata",
  "fixtures",
  "test",
  "tests",
  "spec",
  "examples",
  "example",
  "docs",
  "doc",
  "samples",
]);

interface Candidate {
  dir: string;
  rule: EcosystemRule;
  names: ReadonlySet<string>;
}

/** The file names below `dir`, relative to it. */
function namesBelow(paths: readonly string[], dir: string): Set<string> {
  if (dir === "") return new Set(paths);
  const prefix = `${dir}/`;
  return new Set(paths.filter((path) => path.startsWith(prefix)).map((path) => path.slice(prefix.length)));
}

function candidateDirs(paths: readonly string[]): string[] {
  const dirs = new Set<string>([""]);
  for (const path of paths) {
    const segments = path.split("/").slice(0, -1);
    if (segments.length > MAX_DEPTH || segments.some((s) => NOT_PARTS.has(s) || s.startsWith("."))) continue;
    if (segments.length) dirs.add(segments.join("/"));
  }
  // Shallow first, so that a part's root is seen before the directories inside it.
  return [...dirs].sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b));
}

/** Whether `dir` is `root` or below it. */
const inside = (dir: string, root: string) => root === "" || dir === root || dir.startsWith(`${root}/`);

/** A directory Python by its test files alone, with no project file (python.ts). */
const byTestsOnly = (rule: EcosystemRule, names: ReadonlySet<string>) =>
  rule === pythonRule && pythonByTestsOnly(names);

/** Each directory that is a part of each ecosystem, outermost only. */
export function findCandidates(paths: readonly string[]): Candidate[] {
  const found: Candidate[] = [];
  for (const dir of candidateDirs(paths)) {
    const names = namesBelow(paths, dir);
    for (const rule of RULES) {
      if (!rule.marks(names)) continue;
      // A part by its tests alone does not hold a project below it that has a project file to install.
      const held = (c: Candidate) =>
        c.rule === rule && inside(dir, c.dir) && (!byTestsOnly(c.rule, c.names) || byTestsOnly(rule, names));
      if (found.some(held)) continue;
      found.push({ dir, rule, names });
    }
  }
  // A directory Python by its test files alone is a Python project only where no other ecosystem's
  // part holds it: a test script beside a Go module or a Node package is that part's business.
  return found.filter(
    (c) =>
      !byTestsOnly(c.rule, c.names) ||
      !found.some(
        (other) => other.rule !== pythonRule && other.rule !== makeRule && inside(c.dir, other.dir),
      ),
  );
}
