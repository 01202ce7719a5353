/**
 * What running code leaves behind (byte code, test and type-checker caches, installed packages,
 * coverage and build output): never part of a change unless the repository tracks such files, even
 * without a .gitignore saying so. A rule the base commit has a tracked path under is left out, so a
 * repository that keeps e.g. a `.pyc` on purpose keeps getting it.
 */

export interface ArtefactRule {
  /** The rule as a .gitignore line. */
  pattern: string;
  /** A directory name left out wherever it appears (also of the export and the walk, which saves time). */
  dirName?: string;
  /** Whether a tracked path falls under the rule. */
  covers(path: string): boolean;
}

function anywhereDir(name: string): ArtefactRule {
  return {
    pattern: `${name}/`,
    dirName: name,
    covers: (path) => path.split("/").slice(0, -1).includes(name),
  };
}

function rootDir(name: string): ArtefactRule {
  return { pattern: `/${name}/`, covers: (path) => path.startsWith(`${name}/`) };
}

function fileName(pattern: string, test: (name: string) => boolean): ArtefactRule {
  return { pattern, covers: (path) => test(path.slice(path.lastIndexOf("/") + 1)) };
}

const RULES: readonly ArtefactRule[] = [
  ...[
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    "node_modules",
    ".nyc_output",
    ".gradle",
    "htmlcov",
    // What detected setup commands install: a virtual environment, and downloads kept in the workspace.
    ".venv",
    ".agent-fix-cache",
  ].map(anywhereDir),
  {
    pattern: "*.egg-info/",
    covers: (path) =>
      path
        .split("/")
        .slice(0, -1)
        .some((part) => part.endsWith(".egg-info")),
  },
  // Top-level only: a directory called build or dist deeper down is as likely to be source.
  ...["build", "dist", "target", "coverage"].map(rootDir),
  fileName("*.py[cod]", (name) => /\.py[cod]$/.test(name)),
  // Written by the detected `cargo fetch` (and any cargo build) when the crate tracks none: a library
  // crate that keeps no lockfile gets none in its pull request. One that tracks it keeps the rule off.
  fileName("Cargo.lock", (name) => name === "Cargo.lock"),
  fileName(".coverage", (name) => name === ".coverage" || name.startsWith(".coverage.")),
  fileName(".coverage.*", (name) => name.startsWith(".coverage.")),
];

/** The rules that apply to a repository whose base commit tracks `trackedPaths`. */
export function artefactRules(trackedPaths: Iterable<string>): ArtefactRule[] {
  const paths = [...trackedPaths];
  return RULES.filter((rule) => !paths.some((path) => rule.covers(path)));
}
