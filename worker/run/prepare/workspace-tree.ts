/**
 * The authoritative change, computed on the host from files alone: a directory's files are hashed into
 * the worker's own object store (exact bytes, no filters), a temporary index of the paths that count
 * is written to a tree, and trees are diffed. Paths that count: every path the base commit tracks,
 * and new files that neither the repository's .gitignore rules nor the built-in artefact rules ignore.
 * No git command ever runs in a `.git` the agent could write.
 */
import { lstat, readdir, readFile, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ArtefactRule, artefactRules } from "../../aci/artefacts.js";
import { trustedGit } from "../checkout/trusted-git.js";

export interface BaseCommit {
  /** The worker's checkout's git directory: objects are written here. */
  gitDir: string;
  commit: string;
  tree: string;
  /** Base-tracked paths and their modes (100644, 100755, 120000, 160000). */
  tracked: Map<string, { mode: string; oid: string }>;
  rules: ArtefactRule[];
  /** The artefact rules as an excludes file, for check-ignore. */
  excludesFile: string;
  /** A directory for temporary index files. */
  scratch: string;
}

/** Directory names the export and the walk skip for this repository (artefacts it does not track). */
export function skippedDirs(base: BaseCommit): string[] {
  return base.rules.flatMap((rule) => (rule.dirName ? [rule.dirName] : []));
}

/** Reads what the base commit tracks and writes the artefact rules that apply to it. */
export async function loadBaseCommit(gitDir: string, commit: string, scratch: string): Promise<BaseCommit> {
  const listing = await trustedGit(["ls-tree", "-r", "-z", "--full-tree", commit], { gitDir });
  const tracked = new Map<string, { mode: string; oid: string }>();
  for (const record of listing.toString("utf8").split("\0")) {
    const match = /^(\d+) \w+ ([0-9a-f]+)\t(.*)$/s.exec(record);
    if (match) tracked.set(match[3]!, { mode: match[1]!, oid: match[2]! });
  }
  const tree = (await trustedGit(["rev-parse", `${commit}^{tree}`], { gitDir })).toString().trim();
  const rules = artefactRules(tracked.keys());
  const excludesFile = join(scratch, "artefacts.gitignore");
  await writeFile(excludesFile, `${rules.map((rule) => rule.pattern).join("\n")}\n`);
  return { gitDir, commit, tree, tracked, rules, excludesFile, scratch };
}

interface FoundFile {
  path: string;
  mode: "100644" | "100755" | "120000";
}

/** Every file and symlink below `dir`, without `.git` (file or directory) and skipped directories. */
async function walk(dir: string, skipDirs: ReadonlySet<string>): Promise<FoundFile[]> {
  const found: FoundFile[] = [];
  const visit = async (relative: string): Promise<void> => {
    const entries = await readdir(join(dir, relative), { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name === ".git") continue;
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!skipDirs.has(entry.name)) await visit(path);
      } else if (entry.isSymbolicLink()) found.push({ path, mode: "120000" });
      else if (entry.isFile()) {
        const executable = ((await lstat(join(dir, path))).mode & 0o100) !== 0;
        found.push({ path, mode: executable ? "100755" : "100644" });
      }
    }
  };
  await visit("");
  return found;
}

/** The untracked paths the repository's .gitignore files (as found in `dir`) or the artefact rules ignore. */
async function ignoredPaths(base: BaseCommit, dir: string, candidates: string[]): Promise<Set<string>> {
  if (candidates.length === 0) return new Set();
  // `./NAME`: a name such as `:(glob)**` or `:!y` would be read as pathspec magic and fail the
  // command (check-ignore refuses GIT_LITERAL_PATHSPECS); git prints each path as given.
  const out = await trustedGit(
    ["-c", `core.excludesFile=${base.excludesFile}`, "check-ignore", "--no-index", "--stdin", "-z"],
    {
      gitDir: base.gitDir,
      workTree: dir,
      input: candidates.map((path) => `./${path}\0`).join(""),
      okExitCodes: [1],
      literalPathspecs: false,
    },
  );
  return new Set(
    out
      .toString("utf8")
      .split("\0")
      .filter(Boolean)
      .map((path) => path.replace(/^\.\//, "")),
  );
}

/** Writes each file's exact bytes (or a symlink's target) as a blob; returns the ids in order. */
async function hashFiles(base: BaseCommit, dir: string, files: FoundFile[]): Promise<string[]> {
  const ids = new Array<string>(files.length);
  const batch: number[] = [];
  await Promise.all(
    files.map(async (file, i) => {
      if (file.mode !== "120000" && !file.path.includes("\n")) return void batch.push(i);
      const full = join(dir, file.path);
      const input =
        file.mode === "120000" ? await readlink(full, { encoding: "buffer" }) : await readFile(full);
      const out = await trustedGit(["hash-object", "-w", "--no-filters", "--stdin"], {
        gitDir: base.gitDir,
        input,
      });
      ids[i] = out.toString().trim();
    }),
  );
  if (batch.length > 0) {
    const paths = batch.map((i) => join(dir, files[i]!.path));
    const out = await trustedGit(["hash-object", "-w", "--no-filters", "--stdin-paths"], {
      gitDir: base.gitDir,
      input: `${paths.join("\n")}\n`,
    });
    const lines = out.toString().trim().split("\n");
    for (const [n, i] of batch.entries()) ids[i] = lines[n]!;
  }
  return ids;
}

let indexCounter = 0;

/** The tree of the paths that count in `dir` (a directory on the host, never a sandbox's `.git`). */
export async function treeOfDirectory(base: BaseCommit, dir: string): Promise<string> {
  const gitlinks = [...base.tracked].filter(([, entry]) => entry.mode === "160000");
  const underGitlink = (path: string) => gitlinks.some(([link]) => path.startsWith(`${link}/`));
  const files = (await walk(dir, new Set(skippedDirs(base)))).filter((file) => !underGitlink(file.path));
  const untracked = files.filter((file) => !base.tracked.has(file.path)).map((file) => file.path);
  const ignored = await ignoredPaths(base, dir, untracked);
  const counted = files.filter((file) => !ignored.has(file.path));
  const ids = await hashFiles(base, dir, counted);
  const lines = counted.map((file, i) => `${file.mode} ${ids[i]}\t${file.path}\0`);
  for (const [path, entry] of gitlinks) lines.push(`160000 ${entry.oid}\t${path}\0`);
  const indexFile = join(base.scratch, `index-${process.pid}-${++indexCounter}`);
  await trustedGit(["update-index", "--add", "-z", "--index-info"], {
    gitDir: base.gitDir,
    indexFile,
    input: lines.join(""),
  });
  return (await trustedGit(["write-tree"], { gitDir: base.gitDir, indexFile })).toString().trim();
}

/** `git diff --binary` from one tree to another (every file whole, no renames, no external tool). */
export async function diffTrees(
  base: BaseCommit,
  from: string,
  to: string,
  paths?: string[],
): Promise<string> {
  if (from === to) return "";
  const args = [
    "diff",
    "--binary",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    from,
    to,
  ];
  // Literal already: trustedGit sets GIT_LITERAL_PATHSPECS, so a `:(…)` prefix would be part of the name.
  // A loop, not push(...paths): a call spreading tens of thousands of names overflows the stack.
  if (paths) {
    args.push("--");
    for (const path of paths) args.push(path);
  }
  return (await trustedGit(args, { gitDir: base.gitDir })).toString("utf8");
}

/**
 * The paths that differ between two trees, exactly as named (NUL-separated, never quoted): a patch's
 * headers quote a name holding `"`, a space at the end or a control character, so they cannot be read
 * back as names.
 */
export function changedPaths(base: BaseCommit, from: string, to: string): Promise<readonly string[]> {
  // Trees are named by their content: the gate's limit, the proof and the commit ask for the same pair.
  const known = pathsBetween.get(base) ?? new Map<string, Promise<readonly string[]>>();
  pathsBetween.set(base, known);
  const key = `${from}..${to}`;
  const cached = known.get(key);
  if (cached) return cached;
  const listed = trustedGit(["diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to], {
    gitDir: base.gitDir,
  }).then((out) => out.toString("utf8").split("\0").filter(Boolean));
  known.set(key, listed);
  listed.catch(() => known.delete(key)); // asked again, it runs again
  return listed;
}

/** The paths between two trees, per base commit (gone with it). */
const pathsBetween = new WeakMap<BaseCommit, Map<string, Promise<readonly string[]>>>();
